// The live charts' numbers: successive samples of GET /_node/_local/_stats (and of
// /_node/_local/_system for memory) turned into series. Counters become rates per second between
// two samples; gauges and percentiles are taken as they are. Pure, so the tests share it.

/**
 * @typedef {{ time: number, stats: any, system: any }} Sample
 * @typedef {{ name: string, values: Array<number | null> }} Series
 * @typedef {{ id: string, title: string, unit: string, series: Series[] }} Chart
 */

/** How many samples a chart keeps (two minutes at the default interval). */
export const KEEP = 60;

/**
 * The number at a path of the stats tree: a counter's or gauge's `value`.
 *
 * @param {any} tree
 * @param {string[]} path
 * @returns {number | undefined}
 */
export function valueAt(tree, path) {
  let node = tree;
  for (const key of path) node = node !== null && typeof node === 'object' ? node[key] : undefined;
  const value = node !== null && typeof node === 'object' ? node.value : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Counters summed by a grouping of their names: status codes by class ("2xx"), the
 * authentication outcomes of every handler.
 *
 * @param {any} node an object of counters
 * @param {(name: string) => string | undefined} group
 * @returns {Record<string, number>}
 */
function sumBy(node, group) {
  /** @type {Record<string, number>} */
  const sums = {};
  if (node === null || typeof node !== 'object') return sums;
  for (const [name, child] of Object.entries(node)) {
    const key = group(name);
    const value = child !== null && typeof child === 'object' ? child.value : undefined;
    if (key !== undefined && typeof value === 'number') sums[key] = (sums[key] ?? 0) + value;
  }
  return sums;
}

/**
 * The counters of a sample that the charts show as rates, by chart and series name.
 *
 * @param {any} stats
 * @returns {Record<string, Record<string, number>>}
 */
export function counters(stats) {
  const methods = sumBy(stats?.couchdb?.httpd_request_methods, (name) => name);
  const statuses = sumBy(stats?.couchdb?.httpd_status_codes, (code) => (/^[1-5]\d\d$/.test(code) ? `${code[0]}xx` : undefined));
  /** @type {Record<string, number>} */
  const auth = {};
  const handlers = stats?.divan?.auth;
  for (const handler of handlers !== null && typeof handlers === 'object' ? Object.values(handlers) : []) {
    const outcomes = sumBy(handler, (outcome) => (outcome === 'success' ? 'successes' : outcome === 'lockout' ? 'lockouts' : outcome === 'wrong_password' || outcome === 'bad_token' ? 'failures' : undefined));
    for (const [name, value] of Object.entries(outcomes)) auth[name] = (auth[name] ?? 0) + value;
  }
  return { methods, statuses, auth };
}

/**
 * Rates per second from one sample to the next; a counter that went down (a restart) has no rate.
 *
 * @param {Record<string, number>} before
 * @param {Record<string, number>} after
 * @param {number} seconds
 * @returns {Record<string, number | null>}
 */
export function rates(before, after, seconds) {
  /** @type {Record<string, number | null>} */
  const result = {};
  for (const [name, value] of Object.entries(after)) {
    const previous = before[name];
    result[name] = previous === undefined || value < previous || seconds <= 0 ? null : (value - previous) / seconds;
  }
  return result;
}

/**
 * A histogram's percentiles (`[[50, ms], [95, ms], …]`) by name ("p50").
 *
 * @param {any} histogram
 * @returns {Record<string, number>}
 */
export function percentiles(histogram) {
  /** @type {Record<string, number>} */
  const result = {};
  const pairs = Array.isArray(histogram?.value?.percentile) ? histogram.value.percentile : [];
  for (const pair of pairs) if (Array.isArray(pair) && [50, 95, 99].includes(pair[0]) && typeof pair[1] === 'number') result[`p${pair[0]}`] = pair[1];
  return result;
}

/**
 * The total of `/_node/_local/_system`'s `memory` object, in MiB.
 *
 * @param {any} system
 */
export function memoryMiB(system) {
  const memory = system?.memory;
  if (memory === null || typeof memory !== 'object') return undefined;
  const total = Object.values(memory).reduce((sum, value) => sum + (typeof value === 'number' ? value : 0), 0);
  return total / (1024 * 1024);
}

/**
 * The charts from the samples kept, oldest first: one value per sample after the first for
 * rates, one per sample for the others.
 *
 * @param {Sample[]} samples
 * @returns {Chart[]}
 */
export function charts(samples) {
  const steps = samples.slice(1).map((sample, index) => {
    const before = counters(samples[index]?.stats);
    const after = counters(sample.stats);
    const seconds = (sample.time - (samples[index]?.time ?? sample.time)) / 1000;
    return { methods: rates(before.methods, after.methods, seconds), statuses: rates(before.statuses, after.statuses, seconds), auth: rates(before.auth, after.auth, seconds) };
  });
  const later = samples.slice(1);
  return [
    { id: 'chart-methods', title: 'Requests per second, by method', unit: '/s', series: seriesOf(steps.map((step) => step.methods)) },
    { id: 'chart-statuses', title: 'Responses per second, by status', unit: '/s', series: seriesOf(steps.map((step) => step.statuses)) },
    { id: 'chart-latency', title: 'Request time percentiles', unit: 'ms', series: seriesOf(later.map((sample) => percentiles(sample.stats?.couchdb?.request_time))) },
    { id: 'chart-auth', title: 'Authentications per second', unit: '/s', series: seriesOf(steps.map((step) => step.auth)) },
    { id: 'chart-changes', title: 'Open _changes feeds', unit: '', series: seriesOf(later.map((sample) => ({ feeds: valueAt(sample.stats, ['couchdb', 'httpd', 'clients_requesting_changes']) ?? null }))) },
    { id: 'chart-memory', title: 'Server memory', unit: 'MiB', series: seriesOf(later.map((sample) => ({ memory: memoryMiB(sample.system) ?? null }))) },
  ];
}

/**
 * Rows of named values to one series a name; a name missing from a row is a gap (null).
 *
 * @param {Array<Record<string, number | null>>} rows
 * @returns {Series[]}
 */
export function seriesOf(rows) {
  const names = [...new Set(rows.flatMap((row) => Object.keys(row)))].sort();
  return names.map((name) => ({ name, values: rows.map((row) => row[name] ?? null) }));
}
