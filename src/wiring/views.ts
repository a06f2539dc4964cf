/**
 * Views' part of the composition root (app.ts): the view service the routes use, running map and
 * reduce functions in the data layer's JavaScript sandbox.
 */
import type { Config } from '../config/config.js';
import type { Json, JsonObject } from '../json/json.js';
import type { DesignDoc, JsSandbox } from '../js/sandbox.js';
import type { Logger } from '../log/logger.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';
import type { ViewFunctionsOf } from '../views/view-functions.js';
import { Views } from '../views/views.js';
import { reduceLimitOf } from '../views/reduce-limit.js';

/** The sandbox as views see it (a design document read from storage always has `_id` and `_rev`). */
function viewFunctions(sandbox: JsSandbox): ViewFunctionsOf {
  return (db) => ({
    map: (ddoc: JsonObject, path: readonly string[], docs: readonly JsonObject[]) => sandbox.map(db, ddoc as DesignDoc, path, docs),
    call: (ddoc: JsonObject, path: readonly string[], argLists: readonly Json[][], signal?: AbortSignal) => sandbox.call(db, ddoc as DesignDoc, path, argLists, [], signal),
  });
}

export function wireViews(sandbox: JsSandbox, config: Config, log: Logger, tasks: ActiveTasks): Views {
  return new Views({ functions: viewFunctions(sandbox), tasks, log, reduceLimit: () => reduceLimitOf(config) });
}
