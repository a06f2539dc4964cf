/** `GET /_active_tasks` over every worker process (gather.ts): the union of their tasks. */
import type { Gather } from '../cluster/gather.js';
import type { JsonObject } from '../json/json.js';
import type { ActiveTasks } from './active-tasks.js';

const TOPIC = 'active_tasks';

export function shareTasks(tasks: ActiveTasks, gather: Gather): void {
  gather.answer(TOPIC, () => tasks.list());
}

/**
 * Every worker's tasks, oldest first. Each process numbers its tasks `<0.N.0>`; the worker's
 * number goes in the last place (`w2`: `<0.N.2>`), so pids stay unique across workers.
 */
export async function nodeTasks(gather: Gather): Promise<JsonObject[]> {
  const tasks = (await gather.gather(TOPIC)).flatMap((reply) => {
    const worker = /^w(\d+)$/.exec(reply.worker)?.[1];
    const own = reply.value as JsonObject[];
    return worker === undefined ? own : own.map((task) => ({ ...task, pid: String(task['pid']).replace(/\.0>$/, `.${worker}>`) }));
  });
  return tasks.sort((a, b) => Number(a['started_on']) - Number(b['started_on']));
}
