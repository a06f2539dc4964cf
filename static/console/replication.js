// Replication: a form for one-shot and continuous replications between local databases and remote
// servers (POST /_replicate, or a _replicator document that survives restarts), and the
// scheduler's jobs (GET /_scheduler/jobs and /_scheduler/docs), each with a way to cancel it.
import { api, dbPath, failure, query } from './api.js';
import { button, field, form, h, invalid, messages, table } from './dom.js';
import { formatNumber, formatTime } from './format.js';
import { endpointSpec, jobState, replicationBody } from './replication-spec.js';
import { endpoint } from './tasks.js';

const REFRESH_MS = 3000;

/** @param {import('./app.js').Context} context */
export async function render(context) {
  context.title('Replication');
  const jobs = h('div', { id: 'replication-jobs', 'aria-live': 'polite' });
  const refresh = () => showJobs(jobs, refresh);
  context.view.append(
    replicationForm(context, refresh),
    h('section', { 'aria-labelledby': 'jobs-heading' }, h('h2', { id: 'jobs-heading' }, 'Replication jobs'), h('p', { className: 'muted' }, 'Read from the scheduler every few seconds while this page is open.'), jobs),
  );
  await refresh();
  const timer = setInterval(() => {
    if (!jobs.isConnected) clearInterval(timer);
    else void refresh();
  }, REFRESH_MS);
}

/**
 * The fields of one endpoint.
 *
 * @param {'source' | 'target'} role
 * @param {string} user the signed-in user, the default name for a local database
 */
function endpointFields(role, user) {
  const kind = field('Where', { id: `${role}-kind`, tag: 'select', options: ['local', 'remote'] }, 'local: a database of this server; remote: a URL.');
  const location = field('Database or URL', { id: `${role}-location`, autocapitalize: 'none', spellcheck: 'false' });
  const username = field('User name', { id: `${role}-username`, autocapitalize: 'none', spellcheck: 'false', value: user, autocomplete: 'off' });
  const password = field('Password', { id: `${role}-password`, type: 'password', autocomplete: 'off' }, 'The replicator signs in with it; it is not shown again.');
  const wrapper = h('fieldset', null, h('legend', null, role === 'source' ? 'Source' : 'Target'), kind.wrapper, location.wrapper, username.wrapper, password.wrapper);
  const read = () => ({ kind: /** @type {'local' | 'remote'} */ (kind.control.value), location: location.control.value, username: username.control.value, password: password.control.value });
  return { wrapper, read, location: location.control, password: password.control };
}

/**
 * @param {import('./app.js').Context} context
 * @param {() => Promise<void>} refresh
 */
function replicationForm(context, refresh) {
  const source = endpointFields('source', context.session.name);
  const target = endpointFields('target', context.session.name);
  const check = (/** @type {string} */ id, /** @type {string} */ label) => {
    const control = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id }));
    return { control, wrapper: h('div', { className: 'check' }, control, h('label', { for: id }, label)) };
  };
  const continuous = check('replication-continuous', 'Continuous: keep replicating new changes');
  const createTarget = check('replication-create-target', 'Create the target database if missing');
  const persistent = check('replication-persistent', 'Save as a _replicator document (survives a restart)');
  const docId = field('Document id', { id: 'replication-doc-id', autocapitalize: 'none', spellcheck: 'false' }, 'For a _replicator document; empty for a generated one.');
  const children = [h('div', { className: 'endpoints' }, source.wrapper, target.wrapper), h('div', { className: 'checks' }, continuous.wrapper, createTarget.wrapper, persistent.wrapper), docId.wrapper, h('button', { type: 'submit', id: 'start-replication' }, 'Start replication')];
  return form({ id: 'replication-form', 'aria-label': 'New replication' }, children, async () => {
    const from = endpointSpec(source.read(), location.origin, 'source');
    if (!from.ok) return invalid(source.location, from.error);
    const to = endpointSpec(target.read(), location.origin, 'target');
    if (!to.ok) return invalid(target.location, to.error);
    const body = replicationBody(from.value, to.value, { continuous: continuous.control.checked, createTarget: createTarget.control.checked });
    const note = persistent.control.checked ? await saveDocument(body, docId.control.value.trim()) : await replicateNow(body);
    if (note === undefined) return;
    source.password.value = '';
    target.password.value = '';
    await refresh();
    messages.status(note);
  });
}

/**
 * `POST /_replicate`: a one-shot replication answers when it is done, a continuous one at once.
 *
 * @param {Record<string, unknown>} body
 * @returns {Promise<string | undefined>} the news, or undefined after showing the error
 */
async function replicateNow(body) {
  const answer = await api('POST', '/_replicate', body);
  if (!answer.ok) {
    messages.error(failure('The replication did not start', answer));
    return undefined;
  }
  if (body.continuous) return `Continuous replication ${String(answer.body._local_id ?? '')} started.`;
  const done = answer.body.history?.[0];
  return answer.body.no_changes ? 'Replication done: nothing to replicate.' : `Replication done: ${formatNumber(done?.docs_written ?? 0)} documents written, ${formatNumber(done?.doc_write_failures ?? 0)} failures.`;
}

/**
 * @param {Record<string, unknown>} body
 * @param {string} id
 */
async function saveDocument(body, id) {
  const answer = id === '' ? await api('POST', dbPath('_replicator'), body) : await api('PUT', dbPath('_replicator', id), body);
  if (!answer.ok) {
    messages.error(failure('The _replicator document was not saved', answer));
    return undefined;
  }
  return `Replication document ${answer.body.id} saved; the scheduler starts it.`;
}

/**
 * The scheduler's jobs: transient ones (POST /_replicate) from /_scheduler/jobs, those of
 * _replicator documents from /_scheduler/docs (which also lists finished ones).
 *
 * @param {HTMLElement} element
 * @param {() => Promise<void>} refresh
 */
async function showJobs(element, refresh) {
  const [jobs, docs] = await Promise.all([api('GET', '/_scheduler/jobs'), api('GET', `/_scheduler/docs${query({ limit: 200 })}`)]);
  if (!jobs.ok || !Array.isArray(jobs.body?.jobs)) {
    element.replaceChildren(h('p', { className: 'notice', id: 'jobs-unavailable' }, failure('Could not read the scheduler\'s jobs', jobs)));
    return;
  }
  const transient = jobs.body.jobs.filter((/** @type {any} */ job) => job.doc_id === null || job.doc_id === undefined);
  const documents = docs.ok && Array.isArray(docs.body?.docs) ? docs.body.docs : [];
  const rows = [...transient, ...documents].map((/** @type {any} */ job) => [
    job.doc_id ? h('a', { href: `#/db/_replicator/doc/${encodeURIComponent(job.doc_id)}` }, String(job.doc_id)) : shortId(String(job.id ?? '—')),
    endpoint(job.source),
    endpoint(job.target),
    jobState(job),
    formatNumber(job.info?.docs_written),
    formatTime(job.last_updated ?? job.start_time),
    cancelButton(job, refresh),
  ]);
  element.replaceChildren(table('Replication jobs of the scheduler', ['Job', 'Source', 'Target', 'State', 'Documents written', 'Updated', 'Actions'], rows, 'No replication jobs.'));
}

/**
 * A replication id is a 32-digit hash and its options: its start is enough to tell jobs apart,
 * the whole id is in the title and in the cancel button's label.
 *
 * @param {string} id
 */
function shortId(id) {
  return h('code', { title: id, 'data-id': id }, id.length > 14 ? `${id.slice(0, 12)}…` : id);
}

/**
 * Cancels a transient job with POST /_replicate `cancel`, or deletes its _replicator document.
 *
 * @param {any} job
 * @param {() => Promise<void>} refresh
 */
function cancelButton(job, refresh) {
  const label = String(job.doc_id ?? job.id);
  return button('Cancel', async () => {
    let answer;
    if (job.doc_id) {
      const doc = await api('GET', dbPath(String(job.database ?? '_replicator'), job.doc_id));
      answer = doc.ok ? await api('DELETE', `${dbPath(String(job.database ?? '_replicator'), job.doc_id)}${query({ rev: doc.body._rev })}`) : doc;
    } else answer = await api('POST', '/_replicate', { replication_id: job.id, cancel: true });
    if (!answer.ok) return messages.error(failure(`Could not cancel ${label}`, answer));
    await refresh();
    messages.status(`Replication ${label} cancelled.`);
  }, 'danger', { 'aria-label': `Cancel replication ${label}` });
}
