import { resolveAttachments, type FollowsSource, type StoredStub } from '../attachments/incoming.js';
import type { JsonObject } from '../json/json.js';
import type { DocumentEdit, StoredRevision } from '../storage/storage.js';
import type { OpenedDatabase } from './opened-database.js';
import { attachmentCompression, maxAttachmentSize } from './settings.js';

type Stubs = Record<string, StoredStub>;

/**
 * Resolves the edit's `_attachments` (data streamed into storage, stubs taken from the edited
 * revision) before the `beforeDocUpdate` steps, so they see stubs as CouchDB's validation does.
 */
export async function attachmentsOf(
  opened: OpenedDatabase,
  edit: DocumentEdit,
  winner: () => Promise<StoredRevision | undefined>,
  follows?: FollowsSource,
): Promise<Stubs> {
  if (edit.body['_attachments'] === undefined) return {};
  const recreates = edit.baseRev === undefined && edit.revPath === undefined;
  return resolveAttachments(
    {
      storage: opened.storage,
      db: opened.db,
      maxAttachmentSize: maxAttachmentSize(opened.context.config),
      compression: attachmentCompression(opened.context.config),
      ...(recreates ? { winner: await winner() } : {}),
      ...(follows ? { follows } : {}),
    },
    edit,
  );
}

/** The document the steps see: as sent, with its attachments as stubs. */
export function withStubs(doc: JsonObject, stubs: Stubs): JsonObject {
  if (!('_attachments' in doc)) return doc;
  const entries = Object.entries(doc).filter(([key]) => key !== '_attachments');
  if (Object.keys(stubs).length > 0) entries.push(['_attachments', stubs as unknown as JsonObject]);
  return Object.fromEntries(entries) as JsonObject;
}

/** What goes to storage: the steps' result, with exactly the attachments resolved before them. */
export function keepStubs(edit: DocumentEdit, stubs: Stubs): DocumentEdit {
  delete edit.body['_attachments'];
  if (Object.keys(stubs).length > 0 && !edit.deleted) edit.body['_attachments'] = stubs as unknown as JsonObject;
  return edit;
}
