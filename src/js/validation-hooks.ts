import type { DatabaseHooks, DocValidation, Proposed, UpdateBatch } from '../documents/database-hooks.js';
import { compilationError, forbidden, javascriptError, osProcessError, unauthorized } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import type { Json } from '../json/json.js';
import { functionsOf, unsaved } from './design-check.js';
import type { DesignDocCache } from './design-docs.js';
import type { DesignDoc, JsSandbox, Outcome } from './sandbox.js';

/** `_design/_auth` of a users database is CouchDB's own, which Divan runs natively (users/). */
const NATIVE_VALIDATION = '_design/_auth';

const isPlainObject = (value: Json): value is Record<string, Json> => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: Json | undefined): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/**
 * CouchDB's reading of a validation outcome (couch_query_servers:validate_doc_update): a returned
 * value passes; `{forbidden: m}` is 403, `{unauthorized: m}` 401, any other thrown value 500
 * `unknown_error`; an `Error` object (a bug in the function) is 500 with its name; a function that
 * ran out of time or memory, or does not compile, fails the write too (never lets it through).
 */
export function refusalOf(outcome: Outcome): CouchError | undefined {
  if (outcome.ok) return undefined;
  const { error } = outcome;
  if (outcome.kind === 'compile') return compilationError(text(error));
  if (outcome.kind !== 'thrown') return osProcessError(isPlainObject(error) ? text(error['message']) : text(error));
  if (isPlainObject(error)) {
    const keys = Object.keys(error);
    if (keys.length === 1 && keys[0] === 'forbidden') return forbidden(text(error['forbidden']));
    if (keys.length === 1 && keys[0] === 'unauthorized') return unauthorized(text(error['unauthorized']));
    if (keys.length === 2 && typeof error['error'] === 'string' && 'message' in error) return javascriptError(error['error'], text(error['message']));
    if (keys.length === 1) return javascriptError('unknown_error', text(error[keys[0]!]));
  }
  return javascriptError('unknown_error', text(error));
}

export interface ValidationDeps {
  readonly sandbox: JsSandbox;
  readonly designDocs: DesignDocCache;
  readonly isUsersDb: (db: string) => boolean;
  /** Tells the other nodes that this database's design documents changed. */
  readonly publish?: (db: string) => void;
}

/** Every design document's function in turn (id order), one sandbox round trip per design document and batch. */
function validation(deps: ValidationDeps, ddocs: readonly DesignDoc[], batch: UpdateBatch): DocValidation {
  const userCtx = { db: batch.db, name: batch.caller.userCtx.name, roles: batch.caller.userCtx.roles };
  return async (proposed: readonly Proposed[]) => {
    const refusals: (CouchError | undefined)[] = proposed.map(() => undefined);
    for (const ddoc of ddocs) {
      const open = proposed.flatMap((_, index) => (refusals[index] === undefined ? [index] : []));
      if (open.length === 0) break;
      const argLists = open.map((index) => [proposed[index]!.doc, proposed[index]!.oldDoc]);
      const outcomes = await deps.sandbox.call(batch.db, ddoc, ['validate_doc_update'], argLists, [userCtx, batch.secObj]);
      open.forEach((index, at) => (refusals[index] = refusalOf(outcomes[at]!)));
    }
    return refusals;
  };
}

/**
 * `validate_doc_update` of every design document, as a database hook: the design documents that
 * hold one are listed once per database and kept until one of them is written (here or on another
 * node); writes to a database without any cost no sandbox call.
 */
export function validationHooks(deps: ValidationDeps): DatabaseHooks {
  return {
    name: 'validate_doc_update functions',
    appliesTo: () => true,
    async validateUpdates(batch) {
      const usersDb = deps.isUsersDb(batch.db);
      const ddocs = (await deps.designDocs.holding(batch.db, 'validate_doc_update')).filter(
        (ddoc) => !(usersDb && ddoc._id === NATIVE_VALIDATION) && typeof ddoc['validate_doc_update'] === 'string',
      );
      return ddocs.length === 0 ? undefined : validation(deps, ddocs, batch);
    },
    async checkDesign(doc) {
      const functions = functionsOf(doc);
      const errors = await deps.sandbox.check(unsaved(doc), functions.map((each) => each.path));
      const failed = errors.findIndex((error) => error !== undefined);
      if (failed >= 0) throw compilationError(functions[failed]!.prefix + errors[failed]!);
    },
    afterWrite(written) {
      if (written.ids !== 'all' && !written.ids.some((id) => id.startsWith('_design/'))) return;
      deps.designDocs.invalidate(written.db);
      deps.publish?.(written.db);
    },
  };
}
