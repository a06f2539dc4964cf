/**
 * `_purge`, `_revs_limit` and `_purged_infos_limit` of the SQLite backend, inside the caller's
 * write transaction (see purge-plan.ts for what a purge does to a document).
 */
import { PurgeTally, planDocumentPurge, type PurgeRequest } from '../../revisions/purge-plan.js';
import type { DatabaseLimit } from '../storage.js';
import { releaseReferences } from './sqlite-attachments.js';
import { principalsOfDocument } from '../kit/access-rows.js';
import { countIdChanges, liveDelta, type IdLiveChange } from '../kit/id-blocks.js';
import { idBlockStore } from './sqlite-id-blocks.js';
import type { Connection } from './sqlite-connection.js';
import type { Statements } from './sqlite-statements.js';

function preparePurgeStatements(db: Connection) {
  return {
    counters: db.prepare<[number], { update_seq: number; purge_seq: number; purged_infos_limit: number }>(
      'SELECT update_seq, purge_seq, purged_infos_limit FROM databases WHERE db_id = ?',
    ),
    deleteBody: db.prepare<[number, string], { leaf: number; size: number }>(
      'DELETE FROM revision_bodies WHERE doc_pk = ? AND rev = ? RETURNING leaf, length(CAST(body AS BLOB)) AS size',
    ),
    deleteDocument: db.prepare<[number]>('DELETE FROM documents WHERE doc_pk = ?'),
    recordPurge: db.prepare<[number, number, string, string]>('INSERT INTO purged_infos (db_id, purge_seq, id, revs) VALUES (?, ?, ?, ?)'),
    forgetPurges: db.prepare<[number, number]>('DELETE FROM purged_infos WHERE db_id = ? AND purge_seq <= ?'),
    deletePurgesOfDatabase: db.prepare<[number]>('DELETE FROM purged_infos WHERE db_id = ?'),
    purgedInfos: db.prepare<[number], { id: string; revs: string }>('SELECT id, revs FROM purged_infos WHERE db_id = ? ORDER BY purge_seq'),
    applyCounters: db.prepare<[number, number, number, number, number, number, number]>(
      `UPDATE databases SET update_seq = ?, purge_seq = ?, doc_count = doc_count + ?, deleted_doc_count = deleted_doc_count + ?,
       data_size = data_size + ?, compactable_size = compactable_size + ? WHERE db_id = ?`,
    ),
    setLimit: {
      revs_limit: db.prepare<[number, number]>('UPDATE databases SET revs_limit = ? WHERE db_id = ?'),
      purged_infos_limit: db.prepare<[number, number]>('UPDATE databases SET purged_infos_limit = ? WHERE db_id = ?'),
    },
  };
}

export class SqlitePurges {
  readonly #st: Statements;
  readonly #purge: ReturnType<typeof preparePurgeStatements>;

  constructor(db: Connection, st: Statements) {
    this.#st = st;
    this.#purge = preparePurgeStatements(db);
  }

  /** Purges, in order; per request, the revisions purged. */
  purge(dbId: number, requests: readonly PurgeRequest[]): string[][] {
    const counters = this.#purge.counters.get(dbId)!;
    const tally = new PurgeTally(counters.update_seq, counters.purge_seq);
    const liveChanges: IdLiveChange[] = [];
    const results = requests.map(({ id, revs }) => {
      const row = this.#st.document.get(dbId, id);
      if (row === undefined) return [];
      const plan = planDocumentPurge(row.tree, revs);
      if (plan.purged.length === 0) return [];
      for (const rev of plan.removed) {
        const body = this.#purge.deleteBody.get(row.doc_pk, rev);
        if (body !== undefined) tally.body(body.leaf === 1, body.size);
      }
      // The purged bodies no longer name their attachments: compaction's sweep may reclaim the data.
      releaseReferences(this.#st, dbId, plan.removed.map((rev) => ({ doc_pk: row.doc_pk, rev })));
      const seq = tally.document(row.deleted === 1, plan);
      const gone = plan.remaining === undefined || seq === undefined;
      if (gone) this.#purge.deleteDocument.run(row.doc_pk);
      else this.#st.updateDocument.run(plan.remaining!.treeJson, plan.remaining!.winner, plan.remaining!.deleted ? 1 : 0, seq!, row.doc_pk);
      liveChanges.push({ id, delta: liveDelta(row.deleted === 0, !gone && !plan.remaining!.deleted) });
      this.#refreshAccessRows(dbId, id, row.doc_pk, plan.remaining, seq);
      this.#purge.recordPurge.run(dbId, tally.purgeSeq, id, JSON.stringify(plan.purged));
      return plan.purged;
    });
    countIdChanges(idBlockStore(this.#st.idBlocks), dbId, liveChanges);
    if (tally.finish()) {
      this.#purge.applyCounters.run(tally.updateSeq, tally.purgeSeq, tally.liveDelta, tally.deletedDelta, tally.dataDelta, tally.compactableDelta, dbId);
      this.#purge.forgetPurges.run(dbId, tally.purgeSeq - counters.purged_infos_limit);
    }
    return results;
  }

  /** The per-principal rows of a purged document: those of its remaining winner, or none. */
  #refreshAccessRows(dbId: number, id: string, docPk: number, remaining: { winner: string; deleted: boolean } | undefined, seq: number | undefined): void {
    this.#st.deleteAccessRows.run(dbId, id);
    if (remaining === undefined || seq === undefined) return;
    for (const principal of principalsOfDocument(id, () => this.#st.body.get(docPk, remaining.winner))) {
      this.#st.insertAccessRow.run(dbId, principal, id, seq, remaining.deleted ? 1 : 0);
    }
  }

  /** Sets the limit of the database named `db`; false when it does not exist. */
  setLimitOf(db: string, limit: DatabaseLimit, value: number): boolean {
    const dbId = this.#st.databaseId.get(db);
    if (dbId === undefined) return false;
    this.setLimit(dbId, limit, value);
    return true;
  }

  setLimit(dbId: number, limit: DatabaseLimit, value: number): void {
    this.#purge.setLimit[limit].run(value, dbId);
    if (limit === 'purged_infos_limit') {
      const counters = this.#purge.counters.get(dbId)!;
      this.#purge.forgetPurges.run(dbId, counters.purge_seq - value);
    }
  }

  purgedInfos(dbId: number): PurgeRequest[] {
    return this.#purge.purgedInfos.all(dbId).map((row) => ({ id: row.id, revs: JSON.parse(row.revs) as string[] }));
  }

  deleteOfDatabase(dbId: number): void {
    this.#purge.deletePurgesOfDatabase.run(dbId);
  }
}
