/**
 * The id blocks of the SQLite backend (schema step 8, kit/id-blocks.ts): the store the writer and
 * `_purge` count live documents in, and the offset of a start key read from them.
 */
import type { IdBlockStore } from '../kit/id-blocks.js';
import type { Connection } from './sqlite-connection.js';

export function prepareIdBlockStatements(db: Connection) {
  return {
    blocksBetween: db
      .prepare<[number, string, number, string], string>(
        `SELECT first_id FROM id_blocks WHERE db_id = ? AND first_id <= ?
           AND first_id >= coalesce((SELECT max(first_id) FROM id_blocks WHERE db_id = ? AND first_id <= ?), '')
         ORDER BY first_id`,
      )
      .pluck(),
    add: db
      .prepare<[number, string, number], number>(
        'INSERT INTO id_blocks (db_id, first_id, live) VALUES (?, ?, ?) ON CONFLICT (db_id, first_id) DO UPDATE SET live = live + excluded.live RETURNING live',
      )
      .pluck(),
    liveIdAt: db
      .prepare<[number, string, number], string>('SELECT id FROM documents WHERE db_id = ? AND deleted = 0 AND id >= ? ORDER BY id LIMIT 1 OFFSET ?')
      .pluck(),
    insert: db.prepare<[number, string, number]>('INSERT INTO id_blocks (db_id, first_id, live) VALUES (?, ?, ?)'),
    setLive: db.prepare<[number, number, string]>('UPDATE id_blocks SET live = ? WHERE db_id = ? AND first_id = ?'),
    deleteOfDatabase: db.prepare<[number]>('DELETE FROM id_blocks WHERE db_id = ?'),
    /**
     * Live documents with an id below `key` (`inclusive`: at most `key`): the counts of the blocks
     * before the key's block, plus a count inside that one block (under ID_BLOCK_SPLIT ids).
     */
    countBelow: {
      exclusive: countBelow(db, '<'),
      inclusive: countBelow(db, '<='),
    },
  };
}

function countBelow(db: Connection, op: '<' | '<=') {
  return db
    .prepare<[number, number, string, number, string], number>(
      'SELECT coalesce((SELECT sum(live) FROM id_blocks WHERE db_id = ? AND first_id < f), 0)' +
        ` + (SELECT count(*) FROM documents WHERE db_id = ? AND deleted = 0 AND id >= f AND id ${op} ?)` +
        " FROM (SELECT coalesce((SELECT max(first_id) FROM id_blocks WHERE db_id = ? AND first_id <= ?), '') AS f)",
    )
    .pluck();
}

/** Live documents of database `dbId` with an id below `key` (`inclusive`: at most `key`). */
export function liveBelow(st: IdBlockStatements, dbId: number, key: string, inclusive: boolean): number {
  return st.countBelow[inclusive ? 'inclusive' : 'exclusive'].get(dbId, dbId, key, dbId, key)!;
}

export type IdBlockStatements = ReturnType<typeof prepareIdBlockStatements>;

/** The kit's view of the statements. */
export function idBlockStore(st: IdBlockStatements): IdBlockStore {
  return {
    blocksBetween: (dbId, low, high) => st.blocksBetween.all(dbId, high, dbId, low),
    add: (dbId, firstId, delta) => st.add.get(dbId, firstId, delta)!,
    liveIdAt: (dbId, firstId, offset) => st.liveIdAt.get(dbId, firstId, offset),
    split: (dbId, from, fromLive, firstId, live) => {
      st.insert.run(dbId, firstId, live);
      st.setLive.run(fromLive, dbId, from);
    },
  };
}
