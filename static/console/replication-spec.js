// A replication from the form's values: each endpoint a URL without credentials plus
// `auth.basic`, so no URL the server stores, logs or lists carries a password. Pure, so the page
// and the tests share it.

/**
 * @typedef {{ kind: 'local' | 'remote', location: string, username: string, password: string }} EndpointInput
 * @typedef {{ url: string, auth?: { basic: { username: string, password: string } } }} EndpointSpec
 * @typedef {{ ok: true, value: EndpointSpec } | { ok: false, error: string }} EndpointResult
 */

/**
 * @param {EndpointInput} input
 * @param {string} origin this server's origin, for a local database
 * @param {string} role "source" or "target", for the error
 * @returns {EndpointResult}
 */
export function endpointSpec(input, origin, role) {
  const location = input.location.trim();
  if (location === '') return { ok: false, error: `Please give the ${role}: ${input.kind === 'local' ? 'a database name' : 'a URL'}.` };
  let url;
  try {
    url = input.kind === 'local' ? new URL(`/${encodeURIComponent(location)}`, origin) : new URL(location);
  } catch {
    return { ok: false, error: `The ${role} is not a URL: it starts with http:// or https://.` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, error: `The ${role} is not a URL: it starts with http:// or https://.` };
  // Credentials typed into the URL move to auth.basic, where the server keeps them out of sight.
  let username = input.username.trim();
  let password = input.password;
  if (url.username !== '' && username === '') {
    username = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  }
  url.username = '';
  url.password = '';
  /** @type {EndpointSpec} */
  const spec = { url: url.toString() };
  if (username !== '') spec.auth = { basic: { username, password } };
  return { ok: true, value: spec };
}

/**
 * The body of `POST /_replicate` or of a `_replicator` document.
 *
 * @param {EndpointSpec} source
 * @param {EndpointSpec} target
 * @param {{ continuous: boolean, createTarget: boolean }} options
 */
export function replicationBody(source, target, options) {
  /** @type {Record<string, unknown>} */
  const body = { source, target };
  if (options.continuous) body.continuous = true;
  if (options.createTarget) body.create_target = true;
  return body;
}

/**
 * The scheduler's state of a job in one word: `state` of `_scheduler/docs`, or the latest
 * `history` event of `_scheduler/jobs` ("started" means running).
 *
 * @param {any} job
 */
export function jobState(job) {
  if (typeof job?.state === 'string') return job.state;
  const latest = Array.isArray(job?.history) ? job.history[0]?.type : undefined;
  if (latest === 'started' || latest === 'added') return 'running';
  return typeof latest === 'string' ? latest : '—';
}
