import type { DatabaseHooks, DocValidation, Proposed, UpdateBatch } from '../documents/database-hooks.js';
import { compilationError, invalidDesignDoc } from '../errors/catalog.js';
import type { CouchError } from '../errors/couch-error.js';
import type { DesignDoc, JsSandbox } from '../js/sandbox.js';
import { functionsOf, unsaved } from './design-check.js';
import type { DesignDocCache } from './design-docs.js';
import { validateDocUpdate } from './function-types/validate-doc-update.js';
import { builtinReduceProblem } from './builtin-reduce-names.js';
import { nouveauProblem } from './function-types/nouveau.js';
import { AUTH_DDOC_ID, hasNativeValidation } from '../users/auth-design-doc.js';


interface ValidationDeps {
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
      const outcomes = await deps.sandbox.call(batch.db, ddoc, [validateDocUpdate.member], argLists, [userCtx, batch.secObj]);
      open.forEach((index, at) => {
        const outcome = outcomes[at]!;
        refusals[index] = outcome.ok ? undefined : validateDocUpdate.errorOf(outcome);
      });
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
      const ddocs = (await deps.designDocs.holding(batch.db, validateDocUpdate.member)).filter(
        // A users database's `_design/_auth` holding CouchDB's own function is run natively (users/); edited, its code runs.
        (ddoc) => !(usersDb && ddoc._id === AUTH_DDOC_ID && hasNativeValidation(ddoc)) && typeof ddoc['validate_doc_update'] === 'string',
      );
      return ddocs.length === 0 ? undefined : validation(deps, ddocs, batch);
    },
    async checkDesign(doc) {
      const functions = functionsOf(doc);
      const errors = await deps.sandbox.check(unsaved(doc), functions.map((each) => each.path));
      const failed = errors.findIndex((error) => error !== undefined);
      if (failed >= 0) throw compilationError(functions[failed]!.prefix + errors[failed]!);
      const language = doc['language'] ?? 'javascript';
      const unsupported = (language === 'javascript' || language === 'query' ? builtinReduceProblem(doc) : undefined) ?? nouveauProblem(doc);
      if (unsupported !== undefined) throw invalidDesignDoc(unsupported);
    },
    afterWrite(written) {
      if (written.ids !== 'all' && !written.ids.some((id) => id.startsWith('_design/'))) return;
      deps.designDocs.invalidate(written.db);
      deps.publish?.(written.db);
    },
  };
}
