// Metrics: GET /_node/_local/_stats, CouchDB's tree of counters, gauges and histograms. Live
// charts (metrics-live.js), a few figures up front, then every metric in a table; a clear note
// when the server does not answer with metrics.
import { api, failure } from './api.js';
import { button, h, table } from './dom.js';
import { formatNumber } from './format.js';
import { liveCharts } from './metrics-live.js';

/** The figures shown first, by path in the tree, when the server has them. */
export const GLANCE = [
  [['couchdb', 'httpd', 'requests'], 'HTTP requests'],
  [['couchdb', 'request_time'], 'Request time (ms)'],
  [['couchdb', 'database_reads'], 'Document reads'],
  [['couchdb', 'database_writes'], 'Document writes'],
  [['couchdb', 'open_databases'], 'Open databases'],
  [['couchdb', 'httpd', 'clients_requesting_changes'], 'Open _changes feeds'],
];

/**
 * @typedef {{ path: string[], type: string, value: unknown, desc: string }} Metric
 */

/**
 * Every leaf of the tree: an object with a `value` (and usually `type` and `desc`).
 *
 * @param {unknown} tree
 * @param {string[]} [path]
 * @returns {Metric[]}
 */
export function leaves(tree, path = []) {
  if (tree === null || typeof tree !== 'object' || Array.isArray(tree)) return [];
  const node = /** @type {Record<string, unknown>} */ (tree);
  if ('value' in node && (typeof node.value === 'number' || (node.value !== null && typeof node.value === 'object'))) {
    return [{ path, type: typeof node.type === 'string' ? node.type : typeof node.value === 'number' ? 'counter' : 'histogram', value: node.value, desc: typeof node.desc === 'string' ? node.desc : '' }];
  }
  return Object.keys(node).sort().flatMap((key) => leaves(node[key], [...path, key]));
}

/**
 * A metric's value in words: a number, or a histogram's mean, median and 95th percentile.
 *
 * @param {unknown} value
 */
export function describeValue(value) {
  if (typeof value === 'number') return formatNumber(value);
  if (value === null || typeof value !== 'object') return '—';
  const histogram = /** @type {Record<string, any>} */ (value);
  const p95 = Array.isArray(histogram.percentile) ? histogram.percentile.find((/** @type {unknown[]} */ pair) => pair[0] === 95)?.[1] : undefined;
  const parts = [['mean', histogram.arithmetic_mean], ['median', histogram.median], ['95th', p95], ['n', histogram.n]].filter(([, number]) => typeof number === 'number');
  return parts.length === 0 ? '—' : parts.map(([label, number]) => `${label} ${formatNumber(number)}`).join(', ');
}

/** @param {import('./app.js').Context} context */
export async function render(context) {
  context.title('Metrics');
  context.view.append(h('p', null, button('Refresh', () => context.reload('Refreshed.'), 'secondary', { id: 'refresh-metrics' })));
  const answer = await api('GET', '/_node/_local/_stats');
  if (!answer.ok) {
    const note = answer.status === 0 ? failure('Could not read the metrics', answer) : `Metrics are not available: GET /_node/_local/_stats answered ${answer.status}. ${failure('The server said', answer)}`;
    context.view.append(h('p', { className: 'notice', id: 'metrics-unavailable' }, note));
    return;
  }
  const all = leaves(answer.body);
  if (all.length === 0) {
    context.view.append(h('p', { className: 'notice', id: 'metrics-empty' }, 'The server answered, but with no metrics in the shape this page knows (objects with a value).'));
    return;
  }
  const byPath = new Map(all.map((metric) => [metric.path.join('.'), metric]));
  const cards = GLANCE.flatMap(([path, label]) => {
    const metric = byPath.get(/** @type {string[]} */ (path).join('.'));
    return metric === undefined ? [] : [h('div', { className: 'card' }, h('dt', null, /** @type {string} */ (label)), h('dd', null, describeValue(metric.value)))];
  });
  context.view.append(liveCharts(answer.body));
  if (cards.length > 0) context.view.append(h('section', { 'aria-labelledby': 'glance-heading' }, h('h2', { id: 'glance-heading' }, 'At a glance'), h('dl', { className: 'cards', id: 'metrics-glance' }, ...cards)));
  const rows = all.map((metric) => [h('code', null, metric.path.join('.')), metric.type, describeValue(metric.value), metric.desc]);
  context.view.append(h('section', { 'aria-labelledby': 'all-metrics-heading' }, h('h2', { id: 'all-metrics-heading' }, `All metrics (${all.length})`), table('Every metric of this node', ['Metric', 'Type', 'Value', 'Description'], rows)));
}
