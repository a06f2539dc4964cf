/**
 * Which headers a replication endpoint may send, decided when the endpoint is parsed so that a bad
 * one is a 400 (`_replicate`) or a 403 (`_replicator` write) and never an `http.request` that
 * throws later inside a job (issue 32 item 2). Names and values are checked with Node's own
 * `validateHeaderName`/`validateHeaderValue`, the very checks `http.request` applies.
 *
 * Refused whatever the caller's role:
 * - client-address headers (`X-Forwarded-*`, `Forwarded`, `X-Real-IP`...): the replicator's requests
 *   come from this server, often from loopback, a trusted proxy by default; a header of the job's
 *   author must not choose the client address the remote (this server itself, say) counts password
 *   failures against (issue 32 item 4);
 * - the headers that frame the message (`Content-Length`, `Transfer-Encoding`, `Connection`...):
 *   the client sets them, and a second value would let a job smuggle requests onto a kept-alive socket.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { ReplicationSpecError } from './replication-errors.js';

const CLIENT_ADDRESS = /^(x-forwarded-.*|forwarded|x-real-ip|x-client-ip|true-client-ip|x-cluster-client-ip|cf-connecting-ip)$/;
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer', 'expect']);

const refused = (reason: string): ReplicationSpecError => new ReplicationSpecError(400, 'bad_request', reason);

/** Throws the 400 an endpoint header deserves, or returns when it may be sent. */
export function checkEndpointHeader(name: string, value: string): void {
  try {
    validateHeaderName(name);
  } catch {
    throw refused(`header name ${JSON.stringify(name)} is not a valid HTTP header name`);
  }
  try {
    validateHeaderValue(name, value);
  } catch {
    // Control characters (a CR or LF would end the header early) and characters above U+00FF.
    throw refused(`header ${JSON.stringify(name)} has a value with a character not allowed in HTTP headers`);
  }
  const lower = name.toLowerCase();
  if (CLIENT_ADDRESS.test(lower)) throw refused(`header ${JSON.stringify(name)} is not allowed: the replicator's requests come from this server, not from a proxy`);
  if (FRAMING.has(lower)) throw refused(`header ${JSON.stringify(name)} is not allowed: the replicator frames its own requests`);
}
