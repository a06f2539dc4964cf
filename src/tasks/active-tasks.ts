/**
 * The long-running work of this node that `GET /_active_tasks` lists (CouchDB's couch_task_status):
 * compactions, view indexers, replications. Each task is a JSON object with CouchDB's fields for
 * its `type`; the registry adds `pid`, `node`, `started_on` and `updated_on` (seconds since the epoch).
 */
import type { Json, JsonObject } from '../json/json.js';

export interface TaskHandle {
  /** Merges `fields` into the task (progress, counters) and refreshes `updated_on`. */
  update(fields: Readonly<Record<string, Json>>): void;
  /** Removes the task from the list; calling it again does nothing. */
  finish(): void;
}

interface TaskStart {
  /** CouchDB's task type: `database_compaction`, `view_compaction`, `indexer`, `replication`. */
  type: string;
  [field: string]: Json;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export class ActiveTasks {
  readonly #tasks = new Map<number, JsonObject>();
  readonly #node: () => string;
  #nextPid = 1;

  /** `node` names this node in every task (CouchDB's `node` field). */
  constructor(node: () => string) {
    this.#node = node;
  }

  begin(start: TaskStart): TaskHandle {
    const pid = this.#nextPid++;
    const now = nowSeconds();
    const task: JsonObject = { node: this.#node(), pid: `<0.${pid}.0>`, ...start, started_on: now, updated_on: now };
    this.#tasks.set(pid, task);
    return {
      update: (fields) => {
        const current = this.#tasks.get(pid);
        if (current !== undefined) Object.assign(current, fields, { updated_on: nowSeconds() });
      },
      finish: () => {
        this.#tasks.delete(pid);
      },
    };
  }

  /** Copies of the running tasks, oldest first. */
  list(): JsonObject[] {
    return [...this.#tasks.values()].map((task) => ({ ...task }));
  }
}
