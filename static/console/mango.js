// A database's Mango page: a selector with fields, sort and limit, run with POST _find (a page at
// a time by bookmark), the query plan of POST _explain, and the indexes (mango-indexes.js).
import { api, dbPath, failure } from './api.js';
import { button, field, form, h, invalid, messages, table } from './dom.js';
import { formatNumber, oneLine } from './format.js';
import { DEFAULT_SELECTOR, findRequest } from './mango-query.js';
import { indexSection } from './mango-indexes.js';

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const db = context.segments[1] ?? '';
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: `#/db/${encodeURIComponent(db)}` }, `← ${db}`)));
  context.title(`Mango query on ${db}`);
  const results = h('section', { id: 'mango-results', 'aria-labelledby': 'mango-results-heading', 'aria-live': 'polite' });
  context.view.append(queryForm(db, results), results);
  context.view.append(await indexSection(db));
}

/**
 * @param {string} db
 * @param {HTMLElement} results
 */
function queryForm(db, results) {
  const selector = field('Selector (JSON)', { id: 'mango-selector', tag: 'textarea', rows: 8, spellcheck: 'false', autocapitalize: 'none', className: 'code' }, 'Operators as in CouchDB: $eq, $gt, $in, $regex, $and, $or, $elemMatch…');
  selector.control.value = DEFAULT_SELECTOR;
  const fields = field('Fields', { id: 'mango-fields', autocapitalize: 'none', spellcheck: 'false' }, 'Comma-separated; empty for whole documents.');
  const sort = field('Sort', { id: 'mango-sort', autocapitalize: 'none', spellcheck: 'false' }, 'Like "year desc, title" or a JSON array; a sort needs an index on its fields.');
  const limit = field('Limit', { id: 'mango-limit', inputmode: 'numeric', value: '25' });
  const controls = { selector: selector.control, fields: fields.control, sort: sort.control, limit: limit.control };
  /** @param {boolean} explain */
  const read = (explain) => {
    const request = findRequest({ selector: controls.selector.value, fields: controls.fields.value, sort: controls.sort.value, limit: controls.limit.value });
    if (!request.ok) {
      const target = { selector: controls.selector, sort: controls.sort, limit: controls.limit }[request.field] ?? controls.selector;
      invalid(target, request.error);
      return undefined;
    }
    return explain ? request.value : { ...request.value, execution_stats: true };
  };
  const explainButton = button('Explain', async () => {
    const body = read(true);
    if (body !== undefined) await showExplain(db, body, results);
  }, 'secondary', { id: 'mango-explain-button' });
  const row = h('div', { className: 'field-row' }, fields.wrapper, sort.wrapper, limit.wrapper);
  const actions = h('div', { className: 'actions' }, h('button', { type: 'submit', id: 'mango-run' }, 'Run query'), explainButton);
  return form({ id: 'mango-form', 'aria-label': 'Mango query' }, [selector.wrapper, row, actions], async () => {
    const body = read(false);
    if (body !== undefined) await runFind(db, body, results);
  });
}

/**
 * Runs `_find` and shows the documents; "Next page" goes on from the answer's bookmark.
 *
 * @param {string} db
 * @param {Record<string, unknown>} body
 * @param {HTMLElement} results
 */
async function runFind(db, body, results) {
  const answer = await api('POST', `${dbPath(db)}/_find`, body);
  results.replaceChildren(h('h2', { id: 'mango-results-heading' }, 'Results'));
  if (!answer.ok) {
    results.append(h('p', { className: 'notice', id: 'mango-error' }, failure('The query failed', answer)));
    messages.error(failure('The query failed', answer));
    return;
  }
  /** @type {any[]} */
  const docs = Array.isArray(answer.body.docs) ? answer.body.docs : [];
  const rows = docs.map((doc) => [
    typeof doc?._id === 'string' ? h('a', { href: `#/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(doc._id)}` }, doc._id) : '—',
    h('code', null, oneLine(doc)),
  ]);
  const stats = answer.body.execution_stats;
  const summary = `${docs.length} document${docs.length === 1 ? '' : 's'}` + (stats ? `; ${formatNumber(stats.total_docs_examined)} examined in ${formatNumber(stats.execution_time_ms)} ms` : '');
  results.append(h('p', { id: 'mango-summary' }, summary));
  if (typeof answer.body.warning === 'string') results.append(h('p', { className: 'notice', id: 'mango-warning' }, answer.body.warning));
  results.append(table('Documents found', ['Id', 'Document'], rows, 'No document matches this selector.'));
  const limit = typeof body.limit === 'number' ? body.limit : 25;
  if (typeof answer.body.bookmark === 'string' && docs.length > 0 && docs.length >= limit) {
    results.append(button('Next page', () => runFind(db, { ...body, bookmark: answer.body.bookmark }, results), 'secondary', { id: 'mango-next' }));
  }
  messages.status(`The query found ${summary}.`);
}

/**
 * Shows which index `_explain` says the query would use, and the whole plan.
 *
 * @param {string} db
 * @param {Record<string, unknown>} body
 * @param {HTMLElement} results
 */
async function showExplain(db, body, results) {
  const answer = await api('POST', `${dbPath(db)}/_explain`, body);
  results.replaceChildren(h('h2', { id: 'mango-results-heading' }, 'Query plan (_explain)'));
  if (!answer.ok) {
    results.append(h('p', { className: 'notice', id: 'mango-error' }, failure('The server could not explain the query', answer)));
    return;
  }
  const index = answer.body.index ?? {};
  const used = `${String(index.name ?? '—')} (${String(index.type ?? '—')}${index.ddoc ? `, ${index.ddoc}` : ''})`;
  results.append(h('p', { id: 'mango-index-used' }, 'Index used: ', h('strong', null, used)));
  results.append(h('pre', { className: 'code', id: 'mango-explain' }, JSON.stringify(answer.body, null, 2)));
  messages.status(`The query would use the index ${used}.`);
}
