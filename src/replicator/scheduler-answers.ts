/**
 * `_scheduler/jobs` and `_scheduler/docs` over every worker process (gather.ts): each worker runs
 * its own scheduler, so the jobs are the union of theirs, and a document's row is the one of the
 * worker that runs its job (docRank), not the "running elsewhere" every other worker knows.
 */
import type { Gather } from '../cluster/gather.js';
import type { JsonObject } from '../json/json.js';
import type { ReplicatorDocs } from './replicator-docs.js';
import type { Scheduler } from './scheduler.js';
import { docRank, docView, jobView } from './scheduler-views.js';

const JOBS = 'scheduler_jobs';
const DOCS = 'scheduler_docs';

export function shareScheduler(gather: Gather, scheduler: Scheduler, docs: ReplicatorDocs, node: () => string): void {
  gather.answer(JOBS, () => scheduler.list().map((job) => jobView(job, node())));
  gather.answer(DOCS, () =>
    [...docs.tracked().keys()].flatMap((docId) => {
      const row = docView(docs, scheduler, docId, node());
      return row ? [{ rank: docRank(docs, docId), row }] : [];
    }),
  );
}

const byKey = (key: string) => (a: JsonObject, b: JsonObject): number => (String(a[key]) < String(b[key]) ? -1 : String(a[key]) > String(b[key]) ? 1 : 0);

/** Every worker's jobs, by id. */
export async function nodeJobs(gather: Gather): Promise<JsonObject[]> {
  return (await gather.gather(JOBS)).flatMap((reply) => reply.value as JsonObject[]).sort(byKey('id'));
}

/** One row per `_replicator` document, by id, from the worker that knows most about it. */
export async function nodeDocs(gather: Gather): Promise<JsonObject[]> {
  const best = new Map<string, { rank: number; row: JsonObject }>();
  for (const reply of await gather.gather(DOCS)) {
    for (const each of reply.value as { rank: number; row: JsonObject }[]) {
      const docId = String(each.row['doc_id']);
      if ((best.get(docId)?.rank ?? -1) < each.rank) best.set(docId, each);
    }
  }
  return [...best.values()].map((each) => each.row).sort(byKey('doc_id'));
}
