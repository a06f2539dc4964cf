// A view index's build progress: GET /{db}/_design/{ddoc}/_info (pending changes, whether the
// updater runs) and the indexer's entry in GET /_active_tasks (its percentage), read again every
// second while a query waits for the index.
import { api, dbPath } from './api.js';
import { formatNumber } from './format.js';

const POLL_MS = 1000;

/**
 * Shows the index's state in `element`.
 *
 * @param {string} db
 * @param {string} ddoc
 * @param {HTMLElement} element
 */
export async function indexProgress(db, ddoc, element) {
  const [info, tasks] = await Promise.all([api('GET', `${dbPath(db, `_design/${ddoc}`)}/_info`), api('GET', '/_active_tasks')]);
  const task = tasks.ok && Array.isArray(tasks.body) ? tasks.body.find((/** @type {any} */ entry) => entry?.type === 'indexer' && entry.database === db && entry.design_document === `_design/${ddoc}`) : undefined;
  element.textContent = describeProgress(info.ok ? info.body?.view_index : undefined, task);
  element.dataset.state = task !== undefined || info.body?.view_index?.updater_running ? 'building' : 'idle';
}

/**
 * The index's state in words.
 *
 * @param {any} index `view_index` of `_info`, undefined when the server did not say
 * @param {any} task the indexer's active task, if any
 */
export function describeProgress(index, task) {
  if (task !== undefined) {
    const done = typeof task.changes_done === 'number' && typeof task.total_changes === 'number' ? ` (${formatNumber(task.changes_done)} of ${formatNumber(task.total_changes)} changes)` : '';
    return `Building the index: ${typeof task.progress === 'number' ? `${task.progress} %` : 'under way'}${done}.`;
  }
  if (index === undefined || index === null) return 'The server did not say how far the index is built.';
  const pending = typeof index.updates_pending?.total === 'number' ? index.updates_pending.total : undefined;
  if (index.updater_running) return `Building the index${pending === undefined ? '' : `: ${formatNumber(pending)} changes to go`}.`;
  if (pending !== undefined && pending > 0) return `The index is ${formatNumber(pending)} changes behind; the next query brings it up to date.`;
  return `The index is up to date (sequence ${String(index.update_seq ?? '—')}).`;
}

/**
 * Runs `work` (a query that may wait for the index) and shows the progress until it ends.
 *
 * @template T
 * @param {string} db
 * @param {string} ddoc
 * @param {HTMLElement} element
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function watchProgress(db, ddoc, element, work) {
  let finished = false;
  const poll = async () => {
    while (!finished && element.isConnected) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (!finished) await indexProgress(db, ddoc, element);
    }
  };
  void poll();
  try {
    return await work();
  } finally {
    finished = true;
    await indexProgress(db, ddoc, element);
  }
}
