// One view of a design document: its map and reduce in editors (the server compiles them on
// save and says where they fail), the index's build progress, and a query with the common options.
import { api, dbPath, failure, query } from './api.js';
import { field, form, h, invalid, messages, table } from './dom.js';
import { formatNumber } from './format.js';
import { viewQuery, withView } from './view-query.js';
import { reduceField, viewHash } from './views.js';
import { indexProgress, watchProgress } from './view-progress.js';

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const [, db = '', , ddocName = '', viewName = ''] = context.segments;
  const id = `_design/${ddocName}`;
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: `#/db/${encodeURIComponent(db)}/views` }, `← Views of ${db}`)));
  context.title(`View ${ddocName}/${viewName}`);
  const answer = await api('GET', dbPath(db, id));
  if (!answer.ok) {
    context.view.append(h('p', { className: 'notice', id: 'view-unavailable' }, failure(`Could not open ${id}`, answer)));
    return;
  }
  const ddoc = answer.body;
  const definition = ddoc.views?.[viewName];
  if (!definition || typeof definition.map !== 'string') {
    context.view.append(h('p', { className: 'notice', id: 'view-unavailable' }, `${id} has no view named ${viewName}.`));
    return;
  }
  const progress = h('p', { id: 'index-progress', role: 'status' });
  const target = { db, ddoc: ddocName, view: viewName };
  context.view.append(editForm(context, target, ddoc), h('section', { 'aria-labelledby': 'index-heading' }, h('h2', { id: 'index-heading' }, 'Index'), progress));
  context.view.append(runSection(target, typeof definition.reduce === 'string', progress));
  await indexProgress(db, ddocName, progress);
}

/**
 * @typedef {{ db: string, ddoc: string, view: string }} Target
 */

/**
 * @param {import('./app.js').Context} context
 * @param {Target} target
 * @param {Record<string, any>} ddoc
 */
function editForm(context, target, ddoc) {
  const definition = ddoc.views[target.view];
  const map = field('Map function', { id: 'view-map', tag: 'textarea', rows: 8, spellcheck: 'false', autocapitalize: 'none', className: 'code' }, 'The server compiles the functions when you save and names the error if they do not compile.');
  map.control.value = definition.map;
  const reduce = reduceField('view-reduce', typeof definition.reduce === 'string' ? definition.reduce : '');
  const children = [h('h2', null, 'Definition'), map.wrapper, reduce.wrapper, h('button', { type: 'submit', id: 'save-view' }, 'Save')];
  return form({ id: 'view-form', 'aria-label': 'Edit the view' }, children, async () => {
    const doc = withView(ddoc, target.view, map.control.value, reduce.value());
    const saved = await api('PUT', dbPath(target.db, ddoc._id), doc);
    if (saved.status === 409) return invalid(map.control, 'The design document changed since you opened it (409 conflict). Reload the page to see the current one.');
    if (!saved.ok) return invalid(map.control, failure('The server did not save the view', saved));
    context.go(viewHash(target.db, target.ddoc, target.view), `View ${target.view} saved: revision ${saved.body.rev}.`);
  });
}

/**
 * The query form and its results.
 *
 * @param {Target} target
 * @param {boolean} hasReduce
 * @param {HTMLElement} progress
 */
function runSection(target, hasReduce, progress) {
  const text = (/** @type {string} */ id, /** @type {string} */ label, /** @type {string} */ help) => field(label, { id, autocapitalize: 'none', spellcheck: 'false', className: 'code' }, help);
  const box = (/** @type {string} */ id, /** @type {string} */ label, /** @type {boolean} */ checked) => {
    const control = h('input', { type: 'checkbox', id, checked });
    return { control: /** @type {HTMLInputElement} */ (control), wrapper: h('div', { className: 'check' }, control, h('label', { for: id }, label)) };
  };
  const inputs = {
    key: text('view-key', 'Key', 'JSON, like "apple" or [2024, 1]'),
    keys: text('view-keys', 'Keys', 'A JSON array of keys'),
    startkey: text('view-startkey', 'Start key', 'JSON'),
    endkey: text('view-endkey', 'End key', 'JSON'),
    groupLevel: text('view-group-level', 'Group level', 'With reduce: group array keys by their first items'),
    limit: text('view-limit', 'Limit', ''),
    skip: text('view-skip', 'Skip', ''),
  };
  inputs.limit.control.value = '20';
  const checks = { reduce: box('view-reduce-on', 'Reduce', hasReduce), includeDocs: box('view-include-docs', 'Include documents', false), descending: box('view-descending', 'Descending', false), inclusiveEnd: box('view-inclusive-end', 'Include the end key', true) };
  if (!hasReduce) checks.reduce.wrapper.hidden = true;
  const results = h('div', { id: 'view-results', 'aria-live': 'polite' });
  const children = [h('h2', null, 'Run the view'), h('div', { className: 'field-row' }, ...Object.values(inputs).map((input) => input.wrapper)), h('div', { className: 'checks' }, ...Object.values(checks).map((check) => check.wrapper)), h('button', { type: 'submit', id: 'run-view' }, 'Run')];
  const runForm = form({ id: 'run-view-form', 'aria-label': 'Run the view' }, children, async () => {
    const values = Object.fromEntries(Object.entries(inputs).map(([name, input]) => [name, input.control.value]));
    const flags = Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check.control.checked]));
    const request = viewQuery(/** @type {import('./view-query.js').ViewInput} */ ({ ...values, ...flags, hasReduce }));
    if (!request.ok) {
      const control = { key: inputs.key, keys: inputs.keys, startkey: inputs.startkey, endkey: inputs.endkey, limit: inputs.limit, skip: inputs.skip, 'group level': inputs.groupLevel }[request.field]?.control ?? checks.includeDocs.control;
      return invalid(control, request.error);
    }
    await runView(target, request, results, progress);
  });
  return h('section', { id: 'run-view-section' }, runForm, results);
}

/**
 * @param {Target} target
 * @param {{ params: Record<string, string>, keys: unknown[] | undefined }} request
 * @param {HTMLElement} results
 * @param {HTMLElement} progress
 */
async function runView(target, request, results, progress) {
  const path = `${dbPath(target.db, `_design/${target.ddoc}`)}/_view/${encodeURIComponent(target.view)}${query(request.params)}`;
  // A first query of a big database waits for the index: its progress shows meanwhile.
  const answer = await watchProgress(target.db, target.ddoc, progress, () => (request.keys === undefined ? api('GET', path) : api('POST', path, { keys: request.keys })));
  if (!answer.ok) {
    results.replaceChildren(h('p', { className: 'notice', id: 'view-error' }, failure('The view query failed', answer)));
    return messages.error(failure('The view query failed', answer));
  }
  /** @type {any[]} */
  const rows = Array.isArray(answer.body.rows) ? answer.body.rows : [];
  const withDocs = request.params.include_docs === 'true';
  const withIds = rows.some((row) => row.id !== undefined);
  const headings = ['Key', 'Value', ...(withIds ? ['Id'] : []), ...(withDocs ? ['Document'] : [])];
  const cells = rows.map((row) => [
    h('code', null, asJson(row.key)),
    h('code', null, asJson(row.value)),
    ...(withIds ? [typeof row.id === 'string' ? h('a', { href: `#/db/${encodeURIComponent(target.db)}/doc/${encodeURIComponent(row.id)}` }, row.id) : '—'] : []),
    ...(withDocs ? [h('code', null, asJson(row.doc))] : []),
  ]);
  const total = answer.body.total_rows === undefined ? '' : ` of ${formatNumber(answer.body.total_rows)}${answer.body.offset ? `, from row ${formatNumber(answer.body.offset + 1)}` : ''}`;
  const summary = `${rows.length} row${rows.length === 1 ? '' : 's'}${total}`;
  results.replaceChildren(h('p', { id: 'view-summary' }, summary), table('Rows of the view', headings, cells, 'No rows: nothing matches these options.'));
  messages.status(`The view answered ${summary}.`);
}

/**
 * A key or value as JSON: a string key shows its quotes, as it is typed in the query fields.
 *
 * @param {unknown} value
 */
function asJson(value) {
  return value === undefined ? '—' : JSON.stringify(value);
}
