// Active tasks (GET /_active_tasks) and replications: the _replicator database's documents and,
// where the server has it, the scheduler's view of the jobs (GET /_scheduler/jobs).
import { api, dbPath, failure, query } from './api.js';
import { button, h, table } from './dom.js';
import { formatNumber, formatTime, oneLine } from './format.js';

/** @param {import('./app.js').Context} context */
export async function render(context) {
  context.title('Tasks and replications');
  context.view.append(h('p', null, button('Refresh', () => context.reload('Refreshed.'), 'secondary', { id: 'refresh-tasks' })));
  const [tasks, replicator, jobs] = await Promise.all([
    api('GET', '/_active_tasks'),
    api('GET', `${dbPath('_replicator')}/_all_docs${query({ include_docs: true, limit: 200 })}`),
    api('GET', '/_scheduler/jobs'),
  ]);
  context.view.append(activeTasks(tasks), replicationDocs(replicator), schedulerJobs(jobs));
}

/** @param {import('./api.js').Answer} answer */
function activeTasks(answer) {
  const section = h('section', { id: 'active-tasks', 'aria-labelledby': 'tasks-heading' }, h('h2', { id: 'tasks-heading' }, 'Active tasks'));
  if (!answer.ok || !Array.isArray(answer.body)) {
    section.append(h('p', { className: 'notice' }, failure('Could not read the active tasks', answer)));
    return section;
  }
  const rows = answer.body.map((/** @type {any} */ task) => [
    String(task.type ?? '—'),
    String(task.database ?? task.source ?? '—'),
    typeof task.progress === 'number' ? `${task.progress} %` : '—',
    details(task),
    formatTime(task.started_on),
    formatTime(task.updated_on),
  ]);
  section.append(table('Active tasks', ['Type', 'Database', 'Progress', 'Details', 'Started', 'Updated'], rows, 'No active tasks: nothing is compacting, indexing or replicating right now.'));
  return section;
}

/**
 * The task's other members, in one line each.
 *
 * @param {Record<string, unknown>} task
 */
function details(task) {
  const shown = new Set(['type', 'database', 'progress', 'started_on', 'updated_on', 'pid', 'node']);
  const list = h('ul', { className: 'plain' });
  for (const [key, value] of Object.entries(task)) if (!shown.has(key)) list.append(h('li', null, `${key}: ${oneLine(value)}`));
  return list;
}

/** @param {import('./api.js').Answer} answer */
function replicationDocs(answer) {
  const section = h('section', { id: 'replications', 'aria-labelledby': 'replications-heading' }, h('h2', { id: 'replications-heading' }, 'Replications (_replicator documents)'));
  if (answer.status === 404) {
    section.append(h('p', { className: 'notice' }, 'There is no _replicator database on this server, so no replication documents. ', h('a', { href: '#/' }, 'Create the database _replicator'), ' to start replications with documents.'));
    return section;
  }
  if (!answer.ok) {
    section.append(h('p', { className: 'notice' }, failure('Could not read the _replicator database', answer)));
    return section;
  }
  const docs = answer.body.rows.map((/** @type {any} */ row) => row.doc).filter((/** @type {any} */ doc) => doc && !String(doc._id).startsWith('_design/'));
  const rows = docs.map((/** @type {any} */ doc) => [
    h('a', { href: `#/db/_replicator/doc/${encodeURIComponent(doc._id)}` }, String(doc._id)),
    endpoint(doc.source),
    endpoint(doc.target),
    doc.continuous ? 'continuous' : 'one-shot',
    String(doc._replication_state ?? '—'),
  ]);
  section.append(table('Replication documents', ['Id', 'Source', 'Target', 'Kind', 'State'], rows, 'No replication documents.'));
  return section;
}

/**
 * A replication endpoint without its credentials: a URL's user and password are never shown.
 *
 * @param {unknown} value
 */
export function endpoint(value) {
  const url = typeof value === 'string' ? value : value && typeof value === 'object' && 'url' in value ? String(value.url) : '';
  if (url === '') return '—';
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

/** @param {import('./api.js').Answer} answer */
function schedulerJobs(answer) {
  const section = h('section', { id: 'scheduler', 'aria-labelledby': 'scheduler-heading' }, h('h2', { id: 'scheduler-heading' }, 'Replication jobs (scheduler)'));
  if (answer.status === 400 || answer.status === 404 || answer.status === 405) {
    section.append(h('p', { className: 'notice', id: 'scheduler-unavailable' }, `This server does not offer the replication scheduler's job list (GET /_scheduler/jobs answered ${answer.status}). Replications written as _replicator documents are listed above.`));
    return section;
  }
  if (!answer.ok || !Array.isArray(answer.body?.jobs)) {
    section.append(h('p', { className: 'notice' }, failure('Could not read the replication jobs', answer)));
    return section;
  }
  const rows = answer.body.jobs.map((/** @type {any} */ job) => [String(job.doc_id ?? job.id ?? '—'), endpoint(job.source), endpoint(job.target), String(job.state ?? job.history?.[0]?.type ?? '—'), formatNumber(job.info?.docs_written)]);
  section.append(table('Replication jobs', ['Job', 'Source', 'Target', 'State', 'Documents written'], rows, 'No replication jobs are running.'));
  return section;
}
