// A database's full-text search page: pick a Nouveau index of a design document, type a Lucene
// query, optionally a sort and whether to include each hit's document, see the hits (document id,
// sort order, stored fields, document) a page at a time by bookmark, and open a hit's document.
// Everything from the server is shown as text.
import { api, dbPath, failure, query } from './api.js';
import { field, form, h, invalid, messages, table, button } from './dom.js';
import { formatNumber, oneLine } from './format.js';
import { parseCount } from './mango-query.js';

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const db = context.segments[1] ?? '';
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: `#/db/${encodeURIComponent(db)}` }, `← ${db}`)));
  context.title(`Search ${db}`);
  const answer = await api('GET', `${dbPath(db)}/_all_docs${query({ startkey: '"_design/"', endkey: '"_design0"', include_docs: true })}`);
  if (!answer.ok) {
    context.view.append(h('p', { className: 'notice', id: 'search-unavailable' }, failure(`Could not list the design documents of ${db}`, answer)));
    return;
  }
  const indexes = nouveauIndexes(answer.body.rows);
  if (indexes.length === 0) {
    context.view.append(h('p', { className: 'notice', id: 'search-none' }, 'No design document of this database has a Nouveau index (a "nouveau" member).'));
    return;
  }
  const results = h('section', { id: 'search-results', 'aria-labelledby': 'search-results-heading', 'aria-live': 'polite' });
  context.view.append(searchForm(db, indexes, results), results);
}

/**
 * The Nouveau indexes of the design documents listed by `_all_docs`, as "ddoc/index" names.
 *
 * @param {unknown} rows
 * @returns {string[]}
 */
function nouveauIndexes(rows) {
  const names = [];
  for (const row of Array.isArray(rows) ? rows : []) {
    const doc = row?.doc;
    if (!doc || typeof doc._id !== 'string' || !doc.nouveau || typeof doc.nouveau !== 'object') continue;
    const ddoc = doc._id.replace(/^_design\//, '');
    for (const index of Object.keys(doc.nouveau)) names.push(`${ddoc}/${index}`);
  }
  return names;
}

/**
 * @param {string} db
 * @param {string[]} indexes
 * @param {HTMLElement} results
 */
function searchForm(db, indexes, results) {
  const index = field('Index', { id: 'search-index', tag: 'select', options: indexes }, 'Design document / Nouveau index.');
  const q = field('Query', { id: 'search-query', autocapitalize: 'none', spellcheck: 'false', className: 'code', value: '*:*' }, 'Lucene syntax, as CouchDB\'s Nouveau: title:fox, bar:[10 TO 50], "exact phrase", qu*ck.');
  const limit = field('Limit', { id: 'search-limit', inputmode: 'numeric', value: '25' });
  const sort = field('Sort', { id: 'search-sort', autocapitalize: 'none', spellcheck: 'false', className: 'code' }, 'Empty: by relevance. A field, -field for descending, or a JSON list: ["-price<double>", "title"].');
  const includeDocs = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: 'search-include-docs' }));
  const docsCheck = h('div', { className: 'check' }, includeDocs, h('label', { for: 'search-include-docs' }, 'Include each hit\'s document'));
  const row = h('div', { className: 'field-row' }, index.wrapper, limit.wrapper);
  const actions = h('div', { className: 'actions' }, h('button', { type: 'submit', id: 'search-run' }, 'Search'));
  return form({ id: 'search-form', 'aria-label': 'Full-text search' }, [row, q.wrapper, sort.wrapper, docsCheck, actions], async () => {
    if (q.control.value.trim() === '') return invalid(q.control, 'Type a query: *:* finds every indexed document.');
    const count = parseCount(limit.control.value, 'limit');
    if (!count.ok || count.value === undefined || count.value < 1) return invalid(limit.control, 'The limit is a whole number from 1.');
    const order = parseSort(sort.control.value);
    if (!order.ok) return invalid(sort.control, order.error);
    const [ddoc = '', name = ''] = index.control.value.split(/\/(?=[^/]*$)/);
    /** @type {Record<string, unknown>} */
    const body = { q: q.control.value, limit: count.value };
    if (order.value !== undefined) body.sort = order.value;
    if (includeDocs.checked) body.include_docs = true;
    await runSearch(db, `${dbPath(db, `_design/${ddoc}`)}/_nouveau/${encodeURIComponent(name)}`, body, results);
  });
}

/**
 * The `sort` of a search as typed: nothing, one field, or a JSON list of fields.
 *
 * @param {string} text
 * @returns {{ ok: true, value: string | string[] | undefined } | { ok: false, error: string }}
 */
export function parseSort(text) {
  const typed = text.trim();
  if (typed === '') return { ok: true, value: undefined };
  if (!typed.startsWith('[')) return { ok: true, value: typed };
  try {
    const list = JSON.parse(typed);
    if (Array.isArray(list) && list.length > 0 && list.every((item) => typeof item === 'string')) return { ok: true, value: list };
  } catch {
    // answered below
  }
  return { ok: false, error: 'The sort is a field name, or a JSON list of field names like ["-price", "title"].' };
}

/**
 * Runs the search and shows its hits; "Next page" goes on from the answer's bookmark.
 *
 * @param {string} db
 * @param {string} path
 * @param {Record<string, unknown>} body
 * @param {HTMLElement} results
 */
async function runSearch(db, path, body, results) {
  const answer = await api('POST', path, body);
  results.replaceChildren(h('h2', { id: 'search-results-heading' }, 'Hits'));
  if (!answer.ok) {
    results.append(h('p', { className: 'notice', id: 'search-error' }, failure('The search failed', answer)));
    messages.error(failure('The search failed', answer));
    return;
  }
  /** @type {any[]} */
  const hits = Array.isArray(answer.body.hits) ? answer.body.hits : [];
  const withDocs = body.include_docs === true;
  const rows = hits.map((hit) => [
    typeof hit?.id === 'string' ? h('a', { href: `#/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(hit.id)}` }, hit.id) : '—',
    h('code', null, oneLine(Array.isArray(hit?.order) ? hit.order.map((/** @type {any} */ part) => part?.value) : null)),
    h('code', null, oneLine(hit?.fields ?? {})),
    ...(withDocs ? [h('code', null, oneLine(hit?.doc ?? null))] : []),
  ]);
  const total = typeof answer.body.total_hits === 'number' ? answer.body.total_hits : hits.length;
  const summary = `${formatNumber(total)} hit${total === 1 ? '' : 's'}${answer.body.total_hits_relation === 'GREATER_THAN_OR_EQUAL_TO' ? ' or more' : ''}; ${hits.length} shown`;
  results.append(h('p', { id: 'search-summary' }, summary));
  results.append(table('Hits', ['Id', 'Order', 'Fields', ...(withDocs ? ['Document'] : [])], rows, 'No document matches this query.'));
  if (typeof answer.body.bookmark === 'string' && hits.length > 0 && hits.length >= Number(body.limit)) {
    results.append(button('Next page', () => runSearch(db, path, { ...body, bookmark: answer.body.bookmark }, results), 'secondary', { id: 'search-next' }));
  }
  messages.status(`The search found ${summary}.`);
}
