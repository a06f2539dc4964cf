// One document: its JSON in an editor, its conflicting revisions, its attachments; save, delete.
// `#/db/{db}/new` is the same page for a document that does not exist yet.
import { api, dbPath, failure, query } from './api.js';
import { button, field, form, h, invalid, messages, table } from './dom.js';
import { parseJson } from './format.js';
import { attachmentSection } from './attachments.js';

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const db = context.segments[1] ?? '';
  const isNew = context.segments[2] === 'new';
  const id = context.segments[3] ?? '';
  const base = `#/db/${encodeURIComponent(db)}`;
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: base }, `← ${db}`)));
  if (isNew) {
    context.title(`New document in ${db}`);
    const uuids = await api('GET', '/_uuids');
    const fresh = uuids.ok && Array.isArray(uuids.body?.uuids) ? uuids.body.uuids[0] : '';
    context.view.append(editor(context, db, { _id: fresh }, true));
    return;
  }
  context.title(`Document ${id}`);
  const rev = context.params.get('rev') ?? undefined;
  const answer = await api('GET', `${dbPath(db, id)}${query({ conflicts: true, rev })}`);
  if (!answer.ok) {
    context.view.append(h('p', { className: 'notice', id: 'doc-unavailable' }, failure(`Could not open ${id}`, answer)));
    return;
  }
  const { _conflicts: conflicts, ...doc } = answer.body;
  if (rev !== undefined) context.view.append(h('p', { className: 'notice' }, `You are looking at revision ${rev}. `, h('a', { href: `${base}/doc/${encodeURIComponent(id)}` }, 'Show the current revision')));
  if (Array.isArray(conflicts) && conflicts.length > 0) context.view.append(conflictList(context, db, id, conflicts));
  context.view.append(editor(context, db, doc, false));
  const stubs = doc._attachments && typeof doc._attachments === 'object' ? doc._attachments : {};
  context.view.append(attachmentSection({ db, id, rev: String(doc._rev), current: rev === undefined, reload: context.reload }, stubs));
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} db
 * @param {string} id
 * @param {string[]} conflicts
 */
function conflictList(context, db, id, conflicts) {
  const link = (/** @type {string} */ rev) => h('a', { href: `#/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(id)}?rev=${encodeURIComponent(rev)}` }, rev);
  const discard = (/** @type {string} */ rev) =>
    button('Discard this revision', async () => {
      const answer = await api('DELETE', `${dbPath(db, id)}${query({ rev })}`);
      if (!answer.ok) return messages.error(failure(`Could not discard ${rev}`, answer));
      context.reload(`Revision ${rev} discarded.`);
    }, 'secondary', { 'aria-label': `Discard conflicting revision ${rev}` });
  return h(
    'section',
    { className: 'notice conflicts', id: 'conflicts', 'aria-labelledby': 'conflicts-heading' },
    h('h2', { id: 'conflicts-heading' }, `Conflicts: ${conflicts.length} other revision${conflicts.length === 1 ? '' : 's'}`),
    h('p', null, 'Replicas wrote this document independently. The editor shows the winning revision; open a conflicting one to compare, and discard those you do not keep.'),
    table('Conflicting revisions', ['Revision', 'Action'], conflicts.map((rev) => [link(rev), discard(rev)])),
  );
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} db
 * @param {Record<string, unknown>} doc
 * @param {boolean} isNew
 */
function editor(context, db, doc, isNew) {
  const text = field('Document as JSON', { id: 'doc-json', tag: 'textarea', rows: 18, spellcheck: 'false', autocapitalize: 'none', className: 'code' }, isNew ? 'Leave _id empty for a generated id.' : 'Keep _rev as it is: it tells the server which revision you edited.');
  text.control.value = JSON.stringify(doc, null, 2);
  const actions = h('div', { className: 'actions' }, h('button', { type: 'submit', id: 'save-doc' }, isNew ? 'Create document' : 'Save'));
  if (!isNew) actions.append(deleteButton(context, db, doc, actions));
  return form({ id: 'doc-form', 'aria-label': 'Edit the document' }, [text.wrapper, actions], async () => {
    const parsed = parseJson(text.control.value);
    if (!parsed.ok) return invalid(text.control, `This is not valid JSON: ${parsed.error}`);
    const body = parsed.value;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return invalid(text.control, 'A document is a JSON object: { … }.');
    const target = typeof body._id === 'string' && body._id !== '' ? body._id : undefined;
    if (target === undefined) delete body._id;
    const answer = target === undefined ? await api('POST', dbPath(db), body) : await api('PUT', dbPath(db, target), body);
    if (answer.status === 409) return invalid(text.control, 'The document changed since you opened it, or the id is taken (409 conflict). Reload it to see the current revision.');
    if (!answer.ok) return invalid(text.control, failure('The server did not save the document', answer));
    context.go(`#/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(answer.body.id)}`, `Saved ${answer.body.id}: revision ${answer.body.rev}.`);
  });
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} db
 * @param {Record<string, unknown>} doc
 * @param {HTMLElement} actions
 */
function deleteButton(context, db, doc, actions) {
  const id = String(doc._id);
  return button('Delete…', () => {
    const confirm = button('Delete for good', async () => {
      const answer = await api('DELETE', `${dbPath(db, id)}${query({ rev: String(doc._rev) })}`);
      if (!answer.ok) return messages.error(failure(`Could not delete ${id}`, answer));
      context.go(`#/db/${encodeURIComponent(db)}`, `Document ${id} deleted.`);
    }, 'danger', { id: 'confirm-delete-doc' });
    actions.replaceChildren(h('span', { className: 'muted' }, `Delete ${id}?`), confirm, button('Cancel', () => context.reload(), 'secondary'));
    confirm.focus();
  }, 'danger', { id: 'delete-doc' });
}
