/**
 * Views' part of the composition root (app.ts): the JavaScript sandbox that runs map and reduce
 * functions, and the view service the routes use.
 */
import type { Config } from '../config/config.js';
import type { Json, JsonObject } from '../json/json.js';
import { JsSandbox, type DesignDoc } from '../js/sandbox.js';
import { sandboxSettings } from '../js/sandbox-settings.js';
import type { Logger } from '../log/logger.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';
import type { ViewFunctions } from '../views/view-functions.js';
import { Views } from '../views/views.js';

export interface ViewLayer {
  sandbox: JsSandbox;
  views: Views;
}

/** The sandbox as views see it (a design document read from storage always has `_id` and `_rev`). */
function viewFunctions(sandbox: JsSandbox): ViewFunctions {
  return {
    map: (ddoc: JsonObject, path: readonly string[], docs: readonly JsonObject[]) => sandbox.map(ddoc as DesignDoc, path, docs),
    call: (ddoc: JsonObject, path: readonly string[], argLists: readonly Json[][]) => sandbox.call(ddoc as DesignDoc, path, argLists),
  };
}

export function wireViews(config: Config, log: Logger, tasks: ActiveTasks): ViewLayer {
  const sandbox = new JsSandbox(sandboxSettings(config, log));
  const functions = viewFunctions(sandbox);
  return { sandbox, views: new Views({ functions, tasks, log }) };
}
