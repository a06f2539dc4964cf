// A database's design documents with their views, shows and updates, and a new view (map and
// reduce) saved into a new or an existing design document. One view's page is view.js; a show's
// or an update's is design-function.js.
import { api, dbPath, failure, query } from './api.js';
import { functionNames } from './design-call.js';
import { functionHash } from './design-function.js';
import { field, form, h, invalid, table } from './dom.js';
import { BUILTIN_REDUCES, DEFAULT_MAP, withView } from './view-query.js';

/**
 * The link of one view's page.
 *
 * @param {string} db
 * @param {string} ddoc the design document's name without `_design/`
 * @param {string} view
 */
export function viewHash(db, ddoc, view) {
  return `#/db/${encodeURIComponent(db)}/views/${encodeURIComponent(ddoc)}/${encodeURIComponent(view)}`;
}

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const db = context.segments[1] ?? '';
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: `#/db/${encodeURIComponent(db)}` }, `← ${db}`)));
  context.title(`Views of ${db}`);
  const answer = await api('GET', `${dbPath(db)}/_all_docs${query({ startkey: '"_design/"', endkey: '"_design0"', include_docs: true })}`);
  if (!answer.ok) {
    context.view.append(h('p', { className: 'notice', id: 'views-unavailable' }, failure(`Could not list the design documents of ${db}`, answer)));
    return;
  }
  /** @type {Array<Record<string, any>>} */
  const ddocs = answer.body.rows.map((/** @type {any} */ row) => row.doc).filter((/** @type {any} */ doc) => doc && typeof doc._id === 'string');
  const rows = ddocs.map((doc) => {
    const name = doc._id.replace(/^_design\//, '');
    const names = doc.views && typeof doc.views === 'object' ? Object.keys(doc.views) : [];
    // A design document of Mango indexes ("query") has no JavaScript views to edit or run here.
    const target = (/** @type {string} */ view) => (doc.language === 'query' ? `#/db/${encodeURIComponent(db)}/mango` : viewHash(db, name, view));
    const links = h('ul', { className: 'plain' }, ...names.map((view) => h('li', null, h('a', { href: target(view) }, doc.language === 'query' ? `${view} (Mango index)` : view))));
    const docLink = h('a', { href: `#/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(doc._id)}` }, doc._id);
    return [docLink, names.length === 0 ? h('span', { className: 'muted' }, 'no views') : links, functionLinks(db, name, doc, 'show'), functionLinks(db, name, doc, 'update'), String(doc.language ?? 'javascript')];
  });
  context.view.append(
    h('section', { 'aria-labelledby': 'ddocs-heading' }, h('h2', { id: 'ddocs-heading' }, 'Design documents'), table(`Design documents of ${db}`, ['Design document', 'Views', 'Shows', 'Updates', 'Language'], rows, 'No design documents yet: create a view below.')),
    newViewForm(context, db),
  );
}

/**
 * The shows (or updates) of a design document, each a link to the page that runs it.
 *
 * @param {string} db
 * @param {string} ddoc the design document's name without `_design/`
 * @param {Record<string, unknown>} doc
 * @param {'show' | 'update'} kind
 */
function functionLinks(db, ddoc, doc, kind) {
  const names = functionNames(doc, kind);
  if (names.length === 0) return h('span', { className: 'muted' }, kind === 'show' ? 'no shows' : 'no updates');
  const link = (/** @type {string} */ name) => h('a', { href: functionHash(db, ddoc, kind, name), 'aria-label': `Run the ${kind} ${name} of ${ddoc}` }, name);
  return h('ul', { className: 'plain' }, ...names.map((name) => h('li', null, link(name))));
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} db
 */
function newViewForm(context, db) {
  const ddoc = field('Design document', { id: 'new-view-ddoc', autocapitalize: 'none', spellcheck: 'false' }, 'Its name without _design/; a new one is created, an existing one gets the view added.');
  const name = field('View name', { id: 'new-view-name', autocapitalize: 'none', spellcheck: 'false' });
  const map = field('Map function', { id: 'new-view-map', tag: 'textarea', rows: 6, spellcheck: 'false', autocapitalize: 'none', className: 'code' });
  map.control.value = DEFAULT_MAP;
  const reduce = reduceField('new-view-reduce', '');
  const children = [h('h2', null, 'New view'), h('div', { className: 'field-row' }, ddoc.wrapper, name.wrapper), map.wrapper, reduce.wrapper, h('button', { type: 'submit', id: 'create-view' }, 'Save the view')];
  return form({ id: 'new-view-form', 'aria-label': 'New view' }, children, async () => {
    const ddocName = ddoc.control.value.trim().replace(/^_design\//, '');
    const viewName = name.control.value.trim();
    if (ddocName === '') return invalid(ddoc.control, 'Please name the design document.');
    if (viewName === '') return invalid(name.control, 'Please name the view.');
    const id = `_design/${ddocName}`;
    const current = await api('GET', dbPath(db, id));
    if (!current.ok && current.status !== 404) return invalid(ddoc.control, failure(`Could not read ${id}`, current));
    const doc = withView(current.ok ? current.body : { _id: id }, viewName, map.control.value, reduce.value());
    const saved = await api('PUT', dbPath(db, id), doc);
    if (!saved.ok) return invalid(map.control, failure('The server did not save the view', saved));
    context.go(viewHash(db, ddocName, viewName), `View ${viewName} saved in ${id}.`);
  });
}

/**
 * The reduce of a view: none, a built-in one, or JavaScript typed in a textarea.
 *
 * @param {string} id
 * @param {string} current
 */
export function reduceField(id, current) {
  const custom = current !== '' && !BUILTIN_REDUCES.includes(current);
  const choice = field('Reduce', { id, tag: 'select', options: ['none', ...BUILTIN_REDUCES, 'custom'] });
  choice.control.value = current === '' ? 'none' : custom ? 'custom' : current;
  const code = field('Custom reduce function', { id: `${id}-code`, tag: 'textarea', rows: 5, spellcheck: 'false', autocapitalize: 'none', className: 'code' });
  code.control.value = custom ? current : 'function (keys, values, rereduce) {\n  return sum(values);\n}';
  code.wrapper.hidden = !custom;
  choice.control.addEventListener('change', () => {
    code.wrapper.hidden = choice.control.value !== 'custom';
  });
  const wrapper = h('div', null, choice.wrapper, code.wrapper);
  const value = () => (choice.control.value === 'none' ? '' : choice.control.value === 'custom' ? code.control.value : choice.control.value);
  return { wrapper, value, control: choice.control, code: code.control };
}
