/**
 * The replication id as CouchDB 3 computes it (couch_replicator_ids, version 4): the MD5 of
 * `term_to_binary([ServerUuid, SourceInfo, TargetInfo | Filter ++ WinningRevsOnly ++ SinceSeq])`,
 * so a job started here finds the checkpoints (`_local/{id}`) a CouchDB job left on the same
 * endpoints, and the other way round. `+continuous` and `+create_target` extend the job's id.
 */
import { createHash } from 'node:crypto';
import { atom, binary, ejson, list, string, termToBinary, tuple, type Term } from '../json/erlang-term.js';
import type { Endpoint } from './endpoint.js';
import type { Json, JsonObject } from '../json/json.js';

export const REPLICATION_ID_VERSION = 4;

/** The filter part of a replication, as the id sees it. */
export type FilterPart =
  | { kind: 'none' }
  | { kind: 'doc_ids'; ids: string[] }
  | { kind: 'selector'; selector: JsonObject }
  | { kind: 'view'; name: string; queryParams: JsonObject }
  | { kind: 'user'; code: string; queryParams: JsonObject };

function defaultPort(protocol: string, port: string): boolean {
  return port === '' || (protocol === 'https:' && port === '443') || (protocol === 'http:' && (port === '80' || port === '5984'));
}

/** `{remote, User, Host, NonDefaultPort, Path, Headers, OAuth}`. */
function endpointTerm(endpoint: Endpoint): Term {
  const url = new URL(endpoint.url);
  const explicitPort = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  const port: Term = defaultPort(url.protocol, explicitPort) ? atom('default') : { integer: Number(explicitPort) };
  const path = `${url.pathname}${url.search}`;
  const headers = list(endpoint.headers.map(([name, value]) => tuple([string(name), string(value)])));
  const user = endpoint.basic ? string(endpoint.basic.username) : atom('undefined');
  return tuple([atom('remote'), user, string(url.hostname), port, string(path), headers, atom('undefined')]);
}

/** Object keys sorted, as couch_replicator_filters `ejsort` does for selectors. */
function sortedJson(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedJson(value[key]!)]));
}

function filterTerms(filter: FilterPart): Term[] {
  switch (filter.kind) {
    case 'none':
      return [];
    case 'doc_ids':
      return [list(filter.ids.map(binary))];
    case 'selector':
      return [ejson(sortedJson(filter.selector))];
    case 'view':
      return [binary(filter.name), ejson(filter.queryParams)];
    case 'user':
      return [binary(filter.code), ejson(filter.queryParams)];
  }
}

interface IdInputs {
  serverUuid: string;
  source: Endpoint;
  target: Endpoint;
  filter: FilterPart;
  winningRevsOnly: boolean;
  sinceSeq?: Json;
  continuous: boolean;
  createTarget: boolean;
}

/** `{baseId, extension}`: the checkpoint documents are `_local/{baseId}`. */
export function replicationId(inputs: IdInputs): { baseId: string; extension: string } {
  const terms: Term[] = [binary(inputs.serverUuid), endpointTerm(inputs.source), endpointTerm(inputs.target), ...filterTerms(inputs.filter)];
  if (inputs.winningRevsOnly) terms.push(binary('winning_revs_only'));
  if (inputs.sinceSeq !== undefined) terms.push(ejson(inputs.sinceSeq));
  const baseId = createHash('md5').update(termToBinary(list(terms))).digest('hex');
  const extension = `${inputs.continuous ? '+continuous' : ''}${inputs.createTarget ? '+create_target' : ''}`;
  return { baseId, extension };
}
