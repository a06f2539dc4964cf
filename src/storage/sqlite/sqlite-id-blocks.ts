/**
 * The id blocks and their groups of the SQLite backend (schema step 8, kit/id-blocks.ts): the store the writer and
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
    groupsBetween: db
      .prepare<[number, string, number, string], string>(
        `SELECT first_id FROM id_groups WHERE db_id = ? AND first_id <= ?
           AND first_id >= coalesce((SELECT max(first_id) FROM id_groups WHERE db_id = ? AND first_id <= ?), '')
         ORDER BY first_id`,
      )
      .pluck(),
    addToGroup: db.prepare<[number, string, number]>(
      'INSERT INTO id_groups (db_id, first_id, live) VALUES (?, ?, ?) ON CONFLICT (db_id, first_id) DO UPDATE SET live = live + excluded.live',
    ),
    groupOf: db
      .prepare<[number, string], string>("SELECT coalesce(max(first_id), '') FROM id_groups WHERE db_id = ? AND first_id <= ?")
      .pluck(),
    /** The first ids of the blocks of a group, in order (the group ends where the next one starts). */
    blocksOfGroup: db
      .prepare<[number, string, number, string, number], string>(
        `SELECT first_id FROM id_blocks WHERE db_id = ? AND first_id >= ?
           AND first_id < coalesce((SELECT min(first_id) FROM id_groups WHERE db_id = ? AND first_id > ?), x'ff')
         ORDER BY first_id LIMIT ?`,
      )
      .pluck(),
    /** Live documents of the blocks from `first` to the end of group `group` (a blob sorts after every text). */
    liveToGroupEnd: db
      .prepare<[number, string, number, string], number>(
        `SELECT coalesce(sum(live), 0) FROM id_blocks WHERE db_id = ? AND first_id >= ?
           AND first_id < coalesce((SELECT min(first_id) FROM id_groups WHERE db_id = ? AND first_id > ?), x'ff')`,
      )
      .pluck(),
    deleteOfDatabase: db.prepare<[number]>('DELETE FROM id_blocks WHERE db_id = ?'),
    deleteGroupsOfDatabase: db.prepare<[number]>('DELETE FROM id_groups WHERE db_id = ?'),
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

/** The groups before the key's group, the blocks of that group before the key's block, and a count inside that block. */
function countBelow(db: Connection, op: '<' | '<=') {
  return db
    .prepare<[number, number, number, string, number, number, string], number>(
      'SELECT coalesce((SELECT sum(live) FROM id_groups WHERE db_id = ? AND first_id < g), 0)' +
        ' + coalesce((SELECT sum(live) FROM id_blocks WHERE db_id = ? AND first_id >= g AND first_id < f), 0)' +
        ` + (SELECT count(*) FROM documents WHERE db_id = ? AND deleted = 0 AND id >= f AND id ${op} ?)` +
        " FROM (SELECT f, coalesce((SELECT max(first_id) FROM id_groups WHERE db_id = ? AND first_id <= f), '') AS g" +
        " FROM (SELECT coalesce((SELECT max(first_id) FROM id_blocks WHERE db_id = ? AND first_id <= ?), '') AS f))",
    )
    .pluck();
}

/** Live documents of database `dbId` with an id below `key` (`inclusive`: at most `key`). */
export function liveBelow(st: IdBlockStatements, dbId: number, key: string, inclusive: boolean): number {
  return st.countBelow[inclusive ? 'inclusive' : 'exclusive'].get(dbId, dbId, dbId, key, dbId, dbId, key)!;
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
    groupsBetween: (dbId, low, high) => st.groupsBetween.all(dbId, high, dbId, low),
    addToGroup: (dbId, firstId, delta) => void st.addToGroup.run(dbId, firstId, delta),
    groupOf: (dbId, block, half) => {
      const first = st.groupOf.get(dbId, block)!;
      const blocks = st.blocksOfGroup.all(dbId, first, dbId, first, -1);
      return { first, blocks: blocks.length, middle: blocks[half] };
    },
    splitGroup: (dbId, from, first) => {
      const live = st.liveToGroupEnd.get(dbId, first, dbId, from)!;
      st.addToGroup.run(dbId, first, live);
      st.addToGroup.run(dbId, from, -live);
    },
  };
}
