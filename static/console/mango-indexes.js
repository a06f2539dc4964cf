// A database's Mango indexes: the list of GET /{db}/_index, a new JSON index with POST, and
// deleting one with DELETE /{db}/_index/{ddoc}/{type}/{name}.
import { api, dbPath, failure } from './api.js';
import { button, field, form, h, invalid, messages, table } from './dom.js';
import { oneLine } from './format.js';
import { indexRequest } from './mango-query.js';

/**
 * The section with the list and the form; it refreshes itself after each change.
 *
 * @param {string} db
 */
export async function indexSection(db) {
  const list = h('div', { id: 'mango-index-list' });
  const section = h('section', { id: 'mango-indexes', 'aria-labelledby': 'mango-indexes-heading' }, h('h2', { id: 'mango-indexes-heading' }, 'Indexes'), list);
  const refresh = () => showIndexes(db, list, refresh);
  section.append(createForm(db, refresh));
  await refresh();
  return section;
}

/**
 * @param {string} db
 * @param {HTMLElement} list
 * @param {() => Promise<void>} refresh
 */
async function showIndexes(db, list, refresh) {
  const answer = await api('GET', `${dbPath(db)}/_index`);
  if (!answer.ok || !Array.isArray(answer.body?.indexes)) {
    list.replaceChildren(h('p', { className: 'notice' }, failure('Could not list the indexes', answer)));
    return;
  }
  const rows = answer.body.indexes.map((/** @type {any} */ index) => [
    String(index.name ?? '—'),
    String(index.ddoc ?? '—'),
    String(index.type ?? '—'),
    h('code', null, oneLine(index.def?.fields ?? index.def ?? '—')),
    index.type === 'special' ? h('span', { className: 'muted' }, 'built in') : deleteButton(db, index, refresh),
  ]);
  list.replaceChildren(table('Indexes of this database', ['Name', 'Design document', 'Type', 'Fields', 'Actions'], rows));
}

/**
 * @param {string} db
 * @param {{ ddoc: string, type: string, name: string }} index
 * @param {() => Promise<void>} refresh
 */
function deleteButton(db, index, refresh) {
  const ddoc = String(index.ddoc).replace(/^_design\//, '');
  const path = `${dbPath(db)}/_index/${encodeURIComponent(ddoc)}/${encodeURIComponent(index.type)}/${encodeURIComponent(index.name)}`;
  return button('Delete', async () => {
    const answer = await api('DELETE', path);
    if (!answer.ok) return messages.error(failure(`Could not delete the index ${index.name}`, answer));
    await refresh();
    messages.status(`Index ${index.name} deleted.`);
  }, 'danger', { 'aria-label': `Delete index ${index.name}` });
}

/**
 * @param {string} db
 * @param {() => Promise<void>} refresh
 */
function createForm(db, refresh) {
  const fields = field('Fields to index', { id: 'index-fields', autocapitalize: 'none', spellcheck: 'false' }, 'Like "type, year desc" or a JSON array.');
  const name = field('Index name', { id: 'index-name', autocapitalize: 'none', spellcheck: 'false' }, 'Optional: the server names it.');
  const ddoc = field('Design document', { id: 'index-ddoc', autocapitalize: 'none', spellcheck: 'false' }, 'Optional: the server makes one.');
  const partial = field('Partial filter selector (JSON)', { id: 'index-partial', autocapitalize: 'none', spellcheck: 'false' }, 'Optional: index only the documents it selects.');
  const children = [h('h3', null, 'New index'), h('div', { className: 'field-row' }, fields.wrapper, name.wrapper, ddoc.wrapper, partial.wrapper), h('button', { type: 'submit', id: 'create-index' }, 'Create index')];
  return form({ id: 'index-form', 'aria-label': 'New Mango index' }, children, async () => {
    const request = indexRequest({ fields: fields.control.value, name: name.control.value, ddoc: ddoc.control.value, partial: partial.control.value });
    if (!request.ok) return invalid(request.field === 'partial filter selector' ? partial.control : fields.control, request.error);
    const answer = await api('POST', `${dbPath(db)}/_index`, request.value);
    if (!answer.ok) return invalid(fields.control, failure('The server did not create the index', answer));
    await refresh();
    messages.status(answer.body.result === 'exists' ? `The index ${answer.body.name} exists already.` : `Index ${answer.body.name} created in ${answer.body.id}.`);
  });
}
