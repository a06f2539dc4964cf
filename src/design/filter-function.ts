import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { DesignDoc, JsSandbox } from '../js/sandbox.js';
import { filters } from './function-types/filters.js';

/** A design document's filter function (`filters.{name}`) and the `req` it is called with. */
export interface FilterFunction {
  readonly ddoc: DesignDoc;
  readonly name: string;
  readonly req: JsonObject;
  readonly sandbox: JsSandbox;
  readonly log: Logger;
}

const truthy = (value: Json): boolean => value !== null && value !== false && value !== 0 && value !== '';

/**
 * Whether each document passes the filter function, all in one sandbox request (resumed past its
 * time budget). A thrown value fails the request with CouchDB's error; a call that fails otherwise
 * (time, memory) keeps its document out and is logged.
 */
export async function passingFilter(filter: FilterFunction, db: string, docs: readonly JsonObject[]): Promise<boolean[]> {
  const outcomes = docs.length === 0 ? [] : await filter.sandbox.filter(db, filter.ddoc, [filters.member, filter.name], docs.map((doc) => [doc, filter.req]));
  return outcomes.map((outcome, at) => {
    if (!outcome.ok && outcome.kind === 'thrown') throw filters.errorOf(outcome);
    if (!outcome.ok) filter.log.warning(`filter ${filter.ddoc._id}/${filter.name} failed on ${String(docs[at]!['_id'])}: ${JSON.stringify(outcome.error)}`);
    return outcome.ok && truthy(outcome.value);
  });
}
