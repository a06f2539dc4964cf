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
    h('p', { className: 'links' }, h('a', { href: `${base}/new`, id: 'new-doc-link', className: 'button-link' }, 'New document'), h('a', { href: `${base}/security`, id: 'security-link', className: 'button-link secondary' }, 'Security (_security)'), h('a', { href: `${base}/views`, id: 'views-link', className: 'button-link secondary' }, 'Views'), h('a', { href: `${base}/mango`, id: 'mango-link', className: 'button-link secondary' }, 'Mango query')),
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
 * `_all_docs` a page at a time (limit and skip), design documents included.
 *
 * @param {import('./app.js').Context} context
 * @param {string} db
 * @param {string} base
 */
async function listDocuments(context, db, base) {
  const limit = PAGE_SIZES.includes(context.params.get('limit') ?? '') ? Number(context.params.get('limit')) : 20;
  const skip = Math.max(0, Number.parseInt(context.params.get('skip') ?? '0', 10) || 0);
  const section = h('section', { 'aria-labelledby': 'docs-heading' }, h('h2', { id: 'docs-heading' }, 'Documents'));
  context.view.append(section);
  const answer = await api('GET', `${dbPath(db)}/_all_docs${query({ limit, skip })}`);
  if (!answer.ok) {
    section.append(h('p', { className: 'notice' }, failure('Could not list the documents', answer)));
    return;
  }
  /** @type {Array<{ id: string, value: { rev: string } }>} */
  const rows = answer.body.rows;
  const total = Number(answer.body.total_rows ?? 0);
  const cells = rows.map((row) => [h('a', { href: `${base}/doc/${encodeURIComponent(row.id)}` }, row.id), h('code', null, row.value?.rev ?? '')]);
  section.append(table(`Documents of ${db}`, ['Id', 'Revision'], cells, 'No documents yet.'));
  section.append(pager(base, { skip, limit, shown: rows.length, total }));
}

/**
 * @param {string} base
 * @param {{ skip: number, limit: number, shown: number, total: number }} page
 */
function pager(base, page) {
  const { skip, limit, shown, total } = page;
  const nav = h('nav', { className: 'pager', 'aria-label': 'Pages of documents' });
  if (skip > 0) nav.append(h('a', { href: `${base}?skip=${Math.max(0, skip - limit)}&limit=${limit}`, rel: 'prev', id: 'docs-prev' }, '← Previous'));
  nav.append(h('span', { id: 'docs-range' }, shown === 0 ? `0 of ${total}` : `${skip + 1}–${skip + shown} of ${total}`));
  if (skip + shown < total) nav.append(h('a', { href: `${base}?skip=${skip + limit}&limit=${limit}`, rel: 'next', id: 'docs-next' }, 'Next →'));
  const sizes = h('span', { className: 'page-sizes' }, 'Per page: ');
  for (const size of PAGE_SIZES) {
    sizes.append(String(limit) === size ? h('strong', { 'aria-current': 'true' }, size) : h('a', { href: `${base}?limit=${size}` }, size), ' ');
  }
  nav.append(sizes);
  return nav;
}
