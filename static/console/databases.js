// The databases page: every database with its documents and sizes, create, delete (confirmed by
// typing the name), and a way in by name for database admins who may not list all databases.
import { api, dbPath, failure, query } from './api.js';
import { button, field, form, h, invalid, messages, table } from './dom.js';
import { formatBytes, formatNumber } from './format.js';

const PAGE_SIZE = 20;
/** CouchDB's rule for database names. */
const DB_NAME = /^[a-z][a-z0-9_$()+/-]*$/;

/** @param {import('./app.js').Context} context */
export async function render(context) {
  context.title('Databases');
  const list = h('section', { 'aria-labelledby': 'db-list-heading' }, h('h2', { id: 'db-list-heading' }, 'All databases'));
  context.view.append(createForm(context), openForm(context), list);
  const skip = Math.max(0, Number.parseInt(context.params.get('skip') ?? '0', 10) || 0);
  const answer = await api('GET', `/_all_dbs${query({ limit: PAGE_SIZE + 1, skip })}`);
  if (!answer.ok) {
    list.append(h('p', { className: 'notice', id: 'db-list-unavailable' }, failure('The list of databases is for server admins', answer), ' Open a database by its name above.'));
    return;
  }
  /** @type {string[]} */
  const names = answer.body.slice(0, PAGE_SIZE);
  const infos = await Promise.all(names.map((name) => api('GET', dbPath(name))));
  const rows = names.map((name, index) => row(context, name, infos[index]));
  list.append(table('Databases, their documents and sizes', ['Name', 'Documents', 'Deleted', 'Size on disk', 'Data size', 'Actions'], rows, 'No databases yet: create one above.'));
  list.append(pager(skip, names.length, answer.body.length > PAGE_SIZE));
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} name
 * @param {import('./api.js').Answer} info
 */
function row(context, name, info) {
  const link = h('a', { href: `#/db/${encodeURIComponent(name)}` }, name);
  const actions = h('div', { className: 'actions' }, button('Delete…', () => confirmDelete(context, name, actions), 'danger', { 'aria-label': `Delete database ${name}` }));
  if (!info.ok) return [link, h('span', { className: 'muted' }, failure('No details', info)), '', '', '', actions];
  const body = info.body;
  return [link, formatNumber(body.doc_count), formatNumber(body.doc_del_count), formatBytes(body.sizes?.file), formatBytes(body.sizes?.active), actions];
}

/**
 * @param {number} skip
 * @param {number} shown
 * @param {boolean} more
 */
function pager(skip, shown, more) {
  const nav = h('nav', { className: 'pager', 'aria-label': 'Pages of databases' });
  if (skip > 0) nav.append(h('a', { href: `#/?skip=${Math.max(0, skip - PAGE_SIZE)}`, rel: 'prev' }, '← Previous'));
  if (shown > 0) nav.append(h('span', null, `Databases ${skip + 1}–${skip + shown}`));
  if (more) nav.append(h('a', { href: `#/?skip=${skip + PAGE_SIZE}`, rel: 'next' }, 'Next →'));
  return nav;
}

/** @param {import('./app.js').Context} context */
function createForm(context) {
  const name = field('Name', { id: 'new-db-name', name: 'name', autocapitalize: 'none', spellcheck: 'false', required: true }, 'Lower-case letters, digits and _$()+-/; starting with a letter.');
  return form({ id: 'create-db-form', className: 'inline-form', 'aria-label': 'Create a database' }, [h('h2', null, 'Create a database'), name.wrapper, h('button', { type: 'submit', id: 'create-db-button' }, 'Create')], async () => {
    const value = name.control.value.trim();
    if (!DB_NAME.test(value)) return invalid(name.control, 'A database name starts with a lower-case letter and has only lower-case letters, digits and _$()+-/.');
    const answer = await api('PUT', dbPath(value));
    if (!answer.ok) return invalid(name.control, failure(`Could not create ${value}`, answer));
    context.go(`#/db/${encodeURIComponent(value)}`, `Database ${value} created.`);
  });
}

/** @param {import('./app.js').Context} context */
function openForm(context) {
  const name = field('Database name', { id: 'open-db-name', name: 'name', autocapitalize: 'none', spellcheck: 'false', required: true });
  return form({ id: 'open-db-form', className: 'inline-form', 'aria-label': 'Open a database by name' }, [h('h2', null, 'Open a database'), name.wrapper, h('button', { type: 'submit', className: 'secondary' }, 'Open')], async () => {
    const value = name.control.value.trim();
    if (value === '') return invalid(name.control, 'Please type the name of a database.');
    context.go(`#/db/${encodeURIComponent(value)}`);
  });
}

/**
 * Deleting asks for the name to be typed, in place of the button.
 *
 * @param {import('./app.js').Context} context
 * @param {string} name
 * @param {HTMLElement} actions
 */
function confirmDelete(context, name, actions) {
  const confirmation = field(`Type ${name} to delete it and all its documents`, { name: 'confirm', autocapitalize: 'none', spellcheck: 'false', className: 'confirm-input' });
  const cancel = button('Cancel', () => context.reload(), 'secondary');
  const deleteForm = form({ className: 'confirm-form', 'aria-label': `Confirm deleting ${name}` }, [confirmation.wrapper, h('button', { type: 'submit', className: 'danger' }, 'Delete for good'), cancel], async () => {
    if (confirmation.control.value !== name) return invalid(confirmation.control, `The name typed is not ${name}; nothing was deleted.`);
    const answer = await api('DELETE', dbPath(name));
    if (!answer.ok) return messages.error(failure(`Could not delete ${name}`, answer));
    context.reload(`Database ${name} deleted.`);
  });
  actions.replaceChildren(deleteForm);
  confirmation.control.focus();
}
