// A database's page: its facts, its documents page by page, and the way to a new document and to
// its _security.
import { api, dbPath, failure, query } from './api.js';
import { field, form, h, invalid, table } from './dom.js';
import { formatBytes, formatNumber } from './format.js';

export const PAGE_SIZES = ['20', '50', '100'];

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const db = context.segments[1] ?? '';
  const base = `#/db/${encodeURIComponent(db)}`;
  context.title(`Database ${db}`);
  const info = await api('GET', dbPath(db));
  if (!info.ok) {
    context.view.append(h('p', { className: 'notice', id: 'db-unavailable' }, failure(`Could not open ${db}`, info)), h('p', null, h('a', { href: '#/' }, 'Back to the databases')));
    return;
  }
  context.view.append(
    facts(info.body),
    h('p', { className: 'links' }, h('a', { href: `${base}/new`, id: 'new-doc-link', className: 'button-link' }, 'New document'), h('a', { href: `${base}/security`, id: 'security-link', className: 'button-link secondary' }, 'Security (_security)'), h('a', { href: `${base}/views`, id: 'views-link', className: 'button-link secondary' }, 'Views'), h('a', { href: `${base}/mango`, id: 'mango-link', className: 'button-link secondary' }, 'Mango query'), h('a', { href: `${base}/search`, id: 'search-link', className: 'button-link secondary' }, 'Search')),
    jumpForm(context, db),
  );
  await listDocuments(context, db, base);
}

/** @param {any} body */
function facts(body) {
  const items = [
    ['Documents', formatNumber(body.doc_count)],
    ['Deleted documents', formatNumber(body.doc_del_count)],
    ['Size on disk', formatBytes(body.sizes?.file)],
    ['Data size', formatBytes(body.sizes?.active)],
    ['Update sequence', String(body.update_seq ?? '—')],
  ];
  return h('dl', { className: 'facts', id: 'db-facts' }, ...items.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, value))));
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} db
 */
function jumpForm(context, db) {
  const id = field('Document id', { id: 'jump-doc-id', name: 'id', autocapitalize: 'none', spellcheck: 'false' });
  return form({ id: 'jump-form', className: 'inline-form', 'aria-label': 'Open a document by id' }, [id.wrapper, h('button', { type: 'submit', className: 'secondary' }, 'Open')], async () => {
    if (id.control.value === '') return invalid(id.control, 'Please type a document id.');
    context.go(`#/db/${encodeURIComponent(db)}/doc/${encodeURIComponent(id.control.value)}`);
  });
}

/**
 * `_all_docs` a page at a time by key: a page starts at a document id (`start`) and asks for one
 * row more than it shows, whose id starts the next page; the previous page is read backwards from
 * `start`. Unlike `skip`, no page makes the server walk the rows before it.
 *
 * @param {import('./app.js').Context} context
 * @param {string} db
 * @param {string} base
 */
async function listDocuments(context, db, base) {
  const limit = PAGE_SIZES.includes(context.params.get('limit') ?? '') ? Number(context.params.get('limit')) : 20;
  const start = context.params.get('start') ?? undefined;
  const section = h('section', { 'aria-labelledby': 'docs-heading' }, h('h2', { id: 'docs-heading' }, 'Documents'));
  context.view.append(section);
  const startkey = start === undefined ? undefined : JSON.stringify(start);
  const [answer, before] = await Promise.all([
    api('GET', `${dbPath(db)}/_all_docs${query({ limit: limit + 1, startkey })}`),
    start === undefined ? undefined : api('GET', `${dbPath(db)}/_all_docs${query({ limit, startkey, descending: true, skip: 1 })}`),
  ]);
  if (!answer.ok) {
    section.append(h('p', { className: 'notice' }, failure('Could not list the documents', answer)));
    return;
  }
  /** @type {Array<{ id: string, value: { rev: string } }>} */
  const rows = answer.body.rows.slice(0, limit);
  const cells = rows.map((row) => [h('a', { href: `${base}/doc/${encodeURIComponent(row.id)}` }, row.id), h('code', null, row.value?.rev ?? '')]);
  section.append(table(`Documents of ${db}`, ['Id', 'Revision'], cells, 'No documents yet.'));
  /** @type {string[]} */
  const earlier = before?.ok ? before.body.rows.map((/** @type {{ id: string }} */ row) => row.id) : [];
  const pages = { limit, previous: pageLink(earlier, limit), next: answer.body.rows[limit]?.id };
  section.append(pager(base, pages, { offset: Number(answer.body.offset ?? 0), shown: rows.length, total: Number(answer.body.total_rows ?? 0) }));
}

/**
 * Where the previous page starts, from the ids before this page (nearest first): its first id,
 * or the beginning (null) when fewer than a page are left; undefined when there is none.
 *
 * @param {string[]} earlier
 * @param {number} limit
 * @returns {string | null | undefined}
 */
export function pageLink(earlier, limit) {
  if (earlier.length === 0) return undefined;
  return earlier.length < limit ? null : earlier[limit - 1] ?? null;
}

/**
 * @param {string} base
 * @param {{ limit: number, previous: string | null | undefined, next: string | undefined }} pages
 * @param {{ offset: number, shown: number, total: number }} range
 */
function pager(base, pages, range) {
  const { limit, previous, next } = pages;
  const at = (/** @type {string | null} */ start, /** @type {number} */ size) => `${base}${query({ start: start ?? undefined, limit: size })}`;
  const nav = h('nav', { className: 'pager', 'aria-label': 'Pages of documents' });
  if (previous !== undefined) nav.append(h('a', { href: at(previous, limit), rel: 'prev', id: 'docs-prev' }, '← Previous'));
  nav.append(h('span', { id: 'docs-range' }, range.shown === 0 ? `0 of ${range.total}` : `${range.offset + 1}–${range.offset + range.shown} of ${range.total}`));
  if (next !== undefined) nav.append(h('a', { href: at(next, limit), rel: 'next', id: 'docs-next' }, 'Next →'));
  const sizes = h('span', { className: 'page-sizes' }, 'Per page: ');
  for (const size of PAGE_SIZES) {
    sizes.append(String(limit) === size ? h('strong', { 'aria-current': 'true' }, size) : h('a', { href: `${base}?limit=${size}` }, size), ' ');
  }
  nav.append(sizes);
  return nav;
}
