// A document's attachments: the list, upload (a file picker or drag and drop, with progress),
// download, delete, and a preview of raster images. Uploaded content never runs on the console's
// origin: it is only ever fetched as data (a download of an `application/octet-stream` blob) or
// decoded by an <img>, which runs no script; nothing links or navigates to an attachment's URL.
import { api, dbPath, failure, query } from './api.js';
import { button, h, messages, table } from './dom.js';
import { formatBytes } from './format.js';
import { uploadFile } from './upload.js';

/** Types an <img> may show; SVG is left out (it is a document format). */
export const PREVIEW_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp'];

/**
 * @typedef {{ db: string, id: string, rev: string, current: boolean, reload: (note?: string) => void }} Owner
 * `current` is false on an older revision's page: its attachments can be read, not changed.
 */

/**
 * @param {Owner} owner
 * @param {Record<string, any>} attachments the document's `_attachments` stubs
 */
export function attachmentSection(owner, attachments) {
  const rows = Object.entries(attachments).map(([name, stub]) => [
    name,
    String(stub?.content_type ?? '—'),
    formatBytes(stub?.length),
    preview(owner, name, stub),
    h('div', { className: 'actions' }, downloadButton(owner, name), owner.current ? deleteButton(owner, name) : null),
  ]);
  return h(
    'section',
    { id: 'attachments', 'aria-labelledby': 'attachments-heading' },
    h('h2', { id: 'attachments-heading' }, 'Attachments'),
    table('Attachments of this document', ['Name', 'Type', 'Size', 'Preview', 'Actions'], rows, 'No attachments yet.'),
    owner.current ? uploader(owner) : null,
  );
}

/**
 * @param {Owner} owner
 * @param {string} name
 * @param {any} stub
 */
function preview(owner, name, stub) {
  const type = String(stub?.content_type ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!PREVIEW_TYPES.includes(type)) return h('span', { className: 'muted' }, '—');
  return h('img', { src: attachmentUrl(owner, name), alt: `Preview of ${name}`, className: 'preview', loading: 'lazy' });
}

/**
 * The attachment's URL, of the revision shown.
 *
 * @param {Owner} owner
 * @param {string} name
 */
function attachmentUrl(owner, name) {
  return `${dbPath(owner.db, owner.id, name)}${owner.current ? '' : query({ rev: owner.rev })}`;
}

/**
 * Fetches the attachment and saves it as a file: a blob typed `application/octet-stream`, so
 * the browser downloads it whatever type it was stored with.
 *
 * @param {Owner} owner
 * @param {string} name
 */
function downloadButton(owner, name) {
  return button('Download', async () => {
    let response;
    try {
      response = await fetch(attachmentUrl(owner, name), { credentials: 'same-origin', cache: 'no-store', headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie' } });
    } catch {
      return messages.error(failure(`Could not download ${name}`, { status: 0, ok: false, body: undefined }));
    }
    if (!response.ok) return messages.error(failure(`Could not download ${name}`, { status: response.status, ok: false, body: await response.json().catch(() => undefined) }));
    const blob = new Blob([await response.arrayBuffer()], { type: 'application/octet-stream' });
    const url = URL.createObjectURL(blob);
    const link = h('a', { href: url, download: name.split('/').pop() ?? name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    messages.status(`${name} downloaded (${formatBytes(blob.size)}).`);
  }, 'secondary', { 'aria-label': `Download ${name}` });
}

/**
 * @param {Owner} owner
 * @param {string} name
 */
function deleteButton(owner, name) {
  return button('Delete', async () => {
    const answer = await api('DELETE', `${dbPath(owner.db, owner.id, name)}${query({ rev: owner.rev })}`);
    if (answer.status === 409) return messages.error(`The document changed since you opened it (409 conflict): ${name} was not deleted. Reload the page.`);
    if (!answer.ok) return messages.error(failure(`Could not delete ${name}`, answer));
    owner.reload(`Attachment ${name} deleted.`);
  }, 'danger', { 'aria-label': `Delete attachment ${name}` });
}

/**
 * The file picker and the drop zone; files go up one after the other, each on the revision the
 * previous one made.
 *
 * @param {Owner} owner
 */
function uploader(owner) {
  const input = /** @type {HTMLInputElement} */ (h('input', { type: 'file', id: 'attachment-files', multiple: true }));
  const progress = h('ul', { className: 'plain uploads', id: 'upload-progress', 'aria-live': 'polite' });
  const upload = async (/** @type {File[]} */ files) => {
    if (files.length === 0) return;
    let rev = owner.rev;
    for (const file of files) {
      const bar = /** @type {HTMLProgressElement} */ (h('progress', { max: 1, value: 0, 'aria-label': `Upload of ${file.name}` }));
      const text = h('span', null, `${file.name}: 0 %`);
      progress.append(h('li', null, bar, ' ', text));
      const answer = await uploadFile(dbPath(owner.db, owner.id, file.name) + query({ rev }), file, (loaded, total) => {
        bar.value = total === 0 ? 1 : loaded / total;
        text.textContent = `${file.name}: ${total === 0 ? 100 : Math.floor((loaded * 100) / total)} %`;
      });
      if (!answer.ok) return messages.error(failure(`Could not upload ${file.name}`, answer));
      rev = answer.body.rev;
    }
    owner.reload(`Uploaded ${files.map((file) => file.name).join(', ')}: revision ${rev}.`);
  };
  input.addEventListener('change', () => void upload([...(input.files ?? [])]));
  const zone = h('div', { className: 'dropzone', id: 'attachment-drop' }, h('label', { for: 'attachment-files' }, 'Add attachments'), h('p', { className: 'help' }, 'Choose files, or drop them here.'), input, progress);
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('dragging');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('dragging');
    void upload([...(event.dataTransfer?.files ?? [])]);
  });
  return zone;
}
