import type { DatabaseRow } from '../kit/stored-rows.js';
import { prepareAttachmentStatements } from './sqlite-attachments.js';
import { prepareIdBlockStatements } from './sqlite-id-blocks.js';
import type { Connection } from './sqlite-connection.js';

interface DocumentRow {
  doc_pk: number;
  id: string;
  tree: string;
  winner: string;
  deleted: 0 | 1;
  seq: number;
}

interface LocalRow {
  rev: number;
  body: string;
}

/** Statements on revision bodies: kept per revision, superseded when it stops being a leaf, reclaimed by compaction. */
function prepareBodyStatements(db: Connection) {
  return {
    body: db.prepare<[number, string], string>('SELECT body FROM revision_bodies WHERE doc_pk = ? AND rev = ?').pluck(),
    /** Revisions of a document that still have a body (`_revs_info`). */
    bodyRevs: db.prepare<[number], string>('SELECT rev FROM revision_bodies WHERE doc_pk = ?').pluck(),
    insertBody: db.prepare<[number, string, string, number]>('INSERT INTO revision_bodies (doc_pk, rev, body, leaf) VALUES (?, ?, ?, ?)'),
    /** Marks a stored leaf's body superseded (kept until compaction); answers its bytes. */
    supersedeBody: db
      .prepare<[number, string], number>(
        'UPDATE revision_bodies SET leaf = 0 WHERE doc_pk = ? AND rev = ? AND leaf = 1 RETURNING length(CAST(body AS BLOB))',
      )
      .pluck(),
    /** One slice of compaction: up to `limit` superseded bodies of a database; answers which, with their bytes. */
    reclaimSuperseded: db.prepare<[number, number], { doc_pk: number; rev: string; size: number }>(
      `DELETE FROM revision_bodies WHERE rowid IN (
         SELECT b.rowid FROM revision_bodies b JOIN documents d ON d.doc_pk = b.doc_pk
         WHERE b.leaf = 0 AND d.db_id = ? LIMIT ?)
       RETURNING doc_pk, rev, length(CAST(body AS BLOB)) AS size`,
    ),
    subtractCompactable: db.prepare<[number, number]>('UPDATE databases SET compactable_size = compactable_size - ? WHERE db_id = ?'),
    /** One slice of compaction's stemming: documents of a database after an id, in id order. */
    treesAfter: db.prepare<[number, string, number], { doc_pk: number; id: string; tree: string }>(
      'SELECT doc_pk, id, tree FROM documents WHERE db_id = ? AND id > ? ORDER BY id LIMIT ?',
    ),
    replaceTree: db.prepare<[string, number]>('UPDATE documents SET tree = ? WHERE doc_pk = ?'),
  };
}

/** Every fixed statement, prepared once per connection. */
export function prepareStatements(db: Connection) {
  return {
    databaseByName: db.prepare<[string], DatabaseRow>('SELECT * FROM databases WHERE name = ?'),
    revsLimit: db.prepare<[number], number>('SELECT revs_limit FROM databases WHERE db_id = ?').pluck(),
    databaseId: db.prepare<[string], number>('SELECT db_id FROM databases WHERE name = ?').pluck(),
    databaseNames: db.prepare<[], string>('SELECT name FROM databases ORDER BY name').pluck(),
    insertDatabase: db.prepare<[string, string, string]>(
      'INSERT INTO databases (name, security, instance_start_time) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
    ),
    deleteBodiesOfDatabase: db.prepare<[number]>(
      'DELETE FROM revision_bodies WHERE doc_pk IN (SELECT doc_pk FROM documents WHERE db_id = ?)',
    ),
    deleteDocumentsOfDatabase: db.prepare<[number]>('DELETE FROM documents WHERE db_id = ?'),
    deleteLocalsOfDatabase: db.prepare<[number]>('DELETE FROM local_documents WHERE db_id = ?'),
    deleteIndexRowsOfDatabase: db.prepare<[number]>('DELETE FROM mango_index_rows WHERE db_id = ?'),
    deleteIndexesOfDatabase: db.prepare<[number]>('DELETE FROM mango_indexes WHERE db_id = ?'),
    deleteAccessRowsOfDatabase: db.prepare<[number]>('DELETE FROM access_rows WHERE db_id = ?'),
    deleteDatabase: db.prepare<[number]>('DELETE FROM databases WHERE db_id = ?'),
    updateSecurity: db.prepare<[string, number]>('UPDATE databases SET security = ? WHERE db_id = ?'),
    /** Takes `changes` update sequences and applies the counter deltas; answers the last sequence. */
    addChanges: db
      .prepare<[number, number, number, number, number, number], number>(
        `UPDATE databases SET update_seq = update_seq + ?, doc_count = doc_count + ?,
         deleted_doc_count = deleted_doc_count + ?, data_size = data_size + ?,
         compactable_size = compactable_size + ? WHERE db_id = ? RETURNING update_seq`,
      )
      .pluck(),

    document: db.prepare<[number, string], DocumentRow>(
      'SELECT doc_pk, id, tree, winner, deleted, seq FROM documents WHERE db_id = ? AND id = ?',
    ),
    // The common read (the winner with its body) in one statement instead of two.
    documentWithWinner: db.prepare<[number, string], DocumentRow & { body: string | null }>(
      `SELECT d.doc_pk, d.id, d.tree, d.winner, d.deleted, d.seq, b.body
       FROM documents d LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND b.rev = d.winner
       WHERE d.db_id = ? AND d.id = ?`,
    ),
    insertDocument: db.prepare<[number, string, string, string, number, number]>(
      'INSERT INTO documents (db_id, id, tree, winner, deleted, seq) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    updateDocument: db.prepare<[string, string, number, number, number]>(
      'UPDATE documents SET tree = ?, winner = ?, deleted = ?, seq = ? WHERE doc_pk = ?',
    ),
    deleteAccessRows: db.prepare<[number, string]>('DELETE FROM access_rows WHERE db_id = ? AND id = ?'),
    insertAccessRow: db.prepare<[number, string, string, number, number]>('INSERT INTO access_rows (db_id, principal, id, seq, deleted) VALUES (?, ?, ?, ?, ?)'),
    ...prepareBodyStatements(db),
    ...prepareAttachmentStatements(db),
    idBlocks: prepareIdBlockStatements(db),

    local: db.prepare<[number, string], LocalRow>('SELECT rev, body FROM local_documents WHERE db_id = ? AND id = ?'),
    upsertLocal: db.prepare<[number, string, number, string]>(
      `INSERT INTO local_documents (db_id, id, rev, body) VALUES (?, ?, ?, ?)
       ON CONFLICT (db_id, id) DO UPDATE SET rev = excluded.rev, body = excluded.body`,
    ),
    deleteLocal: db.prepare<[number, string]>('DELETE FROM local_documents WHERE db_id = ? AND id = ?'),
    localsOfDatabase: db.prepare<[number], LocalRow & { id: string }>('SELECT id, rev, body FROM local_documents WHERE db_id = ? ORDER BY id'),

    ping: db.prepare<[], number>('SELECT 1').pluck(),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
