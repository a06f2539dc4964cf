/**
 * `POST /{db}/{docid}` with `multipart/form-data` (CouchDB's form upload, `chttpd_db` `db_doc_req`
 * POST): a `_rev` field (or a `_doc` field with the document's JSON) and `_attachments` file fields;
 * each file becomes an attachment named by its file name, the others are kept. The files are
 * streamed into the attachment store as they arrive (fields may come after them), then the new
 * revision is written through the one write pipeline, taking each file from the store.
 */
import busboy from 'busboy';
import { Readable } from 'node:stream';
import { formUploadDocument, type UploadedFile } from '../databases/attachment-ops.js';
import { writeDocument } from '../databases/document-writes.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import { maxAttachmentSize, maxDocumentSize } from '../databases/settings.js';
import { attachmentTooLarge, formDataRequired, originMismatch, refererMismatch, refererRequired } from '../errors/attachment-errors.js';
import { badRequest, documentTooLarge } from '../errors/catalog.js';
import { json, type Reply } from './reply.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { requestHost } from './urls.js';

/**
 * CouchDB's `validate_referer`: a form post must come from a page of this host. A browser always
 * sends `Referer` (or, with a no-referrer policy, nothing: refused) and `Origin` with a form post, and
 * a page cannot forge either, so a form on another site cannot use a visitor's cookie here.
 */
function requireSameHost(request: Request): void {
  const referer = request.header('referer');
  if (referer === undefined) throw refererRequired();
  const host = requestHost(request);
  const hostOf = (url: string): string | undefined => URL.canParse(url) ? new URL(url).host : undefined;
  if (hostOf(referer) !== host) throw refererMismatch();
  const origin = request.header('origin');
  if (origin !== undefined && hostOf(origin) !== host) throw originMismatch();
}

interface ParsedForm {
  fields: Map<string, string>;
  files: UploadedFile[];
}

/** busboy for this request; a Content-Type it cannot read (no boundary) is the client's error. */
function formParser(request: Request, maxField: number, maxFile: number): busboy.Busboy {
  try {
    return busboy({ headers: request.raw.headers, limits: { fieldSize: maxField, fileSize: maxFile, fields: 100, files: 1000, parts: 1100 } });
  } catch (error) {
    throw badRequest(`Invalid multipart/form-data body: ${(error as Error).message}`);
  }
}

/** Reads the form, each `_attachments` file saved as it streams in (other files are drained). */
function parseForm(request: Request, opened: OpenedDatabase, services: Services): Promise<ParsedForm> {
  const maxFile = maxAttachmentSize(services.config);
  const parser = formParser(request, maxDocumentSize(services.config), maxFile);
  const fields = new Map<string, string>();
  const saves: Promise<UploadedFile>[] = [];
  return new Promise<ParsedForm>((resolve, reject) => {
    let failed = false;
    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      reject(error);
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(documentTooLarge());
      fields.set(name, value);
    });
    parser.on('file', (name, stream, info) => {
      const filename = info.filename;
      if (name !== '_attachments' || filename === undefined || filename === '') return void stream.resume();
      const tooLarge = (): Error => attachmentTooLarge(filename);
      stream.on('limit', () => stream.destroy(tooLarge()));
      const saved = opened.storage.attachments.save(opened.db, stream, maxFile, tooLarge);
      saved.catch(fail);
      saves.push(saved.then(({ digest, length }) => ({ name: filename, contentType: info.mimeType, digest, length })));
    });
    parser.on('error', (error) => fail(badRequest(`Invalid multipart/form-data body: ${(error as Error).message}`)));
    parser.on('close', () => void Promise.all(saves).then((files) => resolve({ fields, files }), fail));
    Readable.from(request.stream()).on('error', fail).pipe(parser);
  });
}

export async function formUpload(request: Request, services: Services, opened: OpenedDatabase, id: string): Promise<Reply> {
  requireSameHost(request);
  if (request.contentType().toLowerCase() !== 'multipart/form-data') throw formDataRequired();
  const form = await parseForm(request, opened, services);
  const { body, follows } = await formUploadDocument(opened, id, form.fields, form.files);
  const result = await writeDocument(opened, body, { id, newEdits: true, follows });
  return json(201, { ok: true, id: result.id, rev: result.rev }, { ETag: `"${result.rev}"` });
}
