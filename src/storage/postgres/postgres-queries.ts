/**
 * Reads of single documents of the PostgreSQL backend (ranges: postgres-range-queries.ts). Each one
 * is a single statement (one snapshot, one round trip) that starts from the database row, so
 * "no row at all" means the database does not exist.
 */
import type pg from 'pg';
import { databaseMissing } from '../../errors/catalog.js';
import { localDocument } from '../kit/local-revisions.js';
import type { RevisionTree } from '../../revisions/revision-tree.js';
import type { DocumentSummary, LocalDocument, OpenedRevision, ReadOptions, RevisionQuery, StoredRevision } from '../storage.js';
import { documentSummary, openedRevisions, storedRevision, type DocumentCore } from '../kit/stored-rows.js';

export type Queryable = Pick<pg.Pool, 'query'>;

/**
 * The revision `options` asks for, in one statement: its body, plus every leaf's body with `latest`
 * (the leaf to read is picked in stored-rows.ts), plus the revisions that keep a body for `revsInfo`.
 */
export async function readRevision(db: Queryable, name: string, id: string, options: ReadOptions): Promise<StoredRevision | undefined> {
  const { rows } = await db.query<{
    id: string | null;
    tree: string;
    winner: string;
    seq: number;
    rev: string | null;
    body: string | null;
    with_body: string[] | null;
  }>(
    `SELECT d.id, d.tree, d.winner, d.seq, b.rev, b.body,
       CASE WHEN $5 THEN ARRAY(SELECT r.rev FROM revision_bodies r WHERE r.doc_pk = d.doc_pk) END AS with_body
     FROM databases x
     LEFT JOIN documents d ON d.db_id = x.db_id AND d.id = $2
     LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND (b.rev = COALESCE($3::text, d.winner) OR ($4 AND b.leaf))
     WHERE x.name = $1`,
    [name, id, options.rev ?? null, options.latest === true, options.revsInfo === true],
  );
  if (rows.length === 0) throw databaseMissing();
  const row = rows[0];
  if (row.id === null) return undefined;
  const bodies = new Map(rows.flatMap((r) => (r.rev === null || r.body === null ? [] : [[r.rev, r.body] as const])));
  return storedRevision({ ...row, id: row.id }, options, (rev) => bodies.get(rev), () => new Set(row.with_body ?? []));
}

/** `_all_docs?keys=`: deleted documents included, as CouchDB shows them; undefined for unknown ids. */
export async function lookupDocuments(
  db: Queryable,
  name: string,
  ids: readonly string[],
  includeDocs: boolean,
): Promise<(DocumentSummary | undefined)[]> {
  const { rows } = await db.query<{ id: string | null; winner: string; deleted: boolean; seq: number; body: string | null }>(
    `SELECT d.id, d.winner, d.deleted, d.seq, b.body
     FROM databases x
     LEFT JOIN documents d ON d.db_id = x.db_id AND d.id = ANY($2::text[])
     LEFT JOIN revision_bodies b ON $3 AND NOT d.deleted AND b.doc_pk = d.doc_pk AND b.rev = d.winner
     WHERE x.name = $1`,
    [name, [...new Set(ids)], includeDocs],
  );
  if (rows.length === 0) throw databaseMissing();
  const found = new Map<string, DocumentSummary>();
  for (const row of rows) {
    if (row.id === null) continue;
    found.set(row.id, documentSummary({ ...row, id: row.id }, includeDocs && !row.deleted ? row.body : undefined));
  }
  // A fresh object per position, as the SQLite backend answers a repeated id.
  return ids.map((id) => {
    const summary = found.get(id);
    return summary === undefined ? undefined : { ...summary };
  });
}

/**
 * `open_revs` for several documents in one statement (one snapshot): every leaf body of the asked
 * documents comes back (documents rarely have more than one leaf) with the bodies of the asked
 * revisions, and the selection is made here.
 */
export async function openRevisions(
  db: Queryable,
  name: string,
  queries: readonly RevisionQuery[],
): Promise<OpenedRevision[][]> {
  const { rows } = await db.query<{ id: string | null; tree: string | null; seq: number; rev: string | null; body: string | null }>(
    `SELECT d.id, d.tree, d.seq, b.rev, b.body
     FROM databases x
     LEFT JOIN documents d ON d.db_id = x.db_id AND d.id = ANY($2::text[])
     LEFT JOIN revision_bodies b ON b.doc_pk = d.doc_pk AND (b.leaf OR b.rev = ANY($3::text[]))
     WHERE x.name = $1`,
    [name, [...new Set(queries.map((query) => query.id))], [...new Set(queries.flatMap((query) => (query.revs === 'all' ? [] : query.revs)))]],
  );
  if (rows.length === 0) throw databaseMissing();
  const documents = new Map<string, DocumentCore & { bodies: Map<string, string> }>();
  for (const row of rows) {
    if (row.id === null) continue;
    let document = documents.get(row.id);
    if (document === undefined) {
      document = { id: row.id, tree: row.tree as string, seq: row.seq, bodies: new Map() };
      documents.set(row.id, document);
    }
    if (row.rev !== null && row.body !== null) document.bodies.set(row.rev, row.body);
  }
  return queries.map((query) => {
    const document = documents.get(query.id);
    return openedRevisions(document, query, (rev) => document?.bodies.get(rev));
  });
}

/** Revision trees of the given ids, in order; undefined for unknown ids. */
export async function revisionTrees(db: Queryable, name: string, ids: readonly string[]): Promise<(RevisionTree | undefined)[]> {
  const { rows } = await db.query<{ id: string | null; tree: string | null }>(
    `SELECT d.id, d.tree FROM databases x
     LEFT JOIN documents d ON d.db_id = x.db_id AND d.id = ANY($2::text[])
     WHERE x.name = $1`,
    [name, [...new Set(ids)]],
  );
  if (rows.length === 0) throw databaseMissing();
  const trees = new Map<string, string>();
  for (const row of rows) if (row.id !== null && row.tree !== null) trees.set(row.id, row.tree);
  return ids.map((id) => {
    const tree = trees.get(id);
    return tree === undefined ? undefined : (JSON.parse(tree) as RevisionTree);
  });
}

/** Every local document of a database, in id byte order. */
export async function listLocal(db: Queryable, name: string): Promise<LocalDocument[]> {
  const { rows } = await db.query<{ id: string | null; rev: number | null; body: string | null }>(
    `SELECT l.id, l.rev, l.body FROM databases x
     LEFT JOIN local_documents l ON l.db_id = x.db_id
     WHERE x.name = $1 ORDER BY l.id`,
    [name],
  );
  if (rows.length === 0) throw databaseMissing();
  return rows.flatMap((row) => (row.id === null ? [] : [localDocument(row.id, row.rev as number, row.body as string)]));
}

export async function getLocal(db: Queryable, name: string, id: string): Promise<LocalDocument | undefined> {
  const { rows } = await db.query<{ rev: number | null; body: string | null }>(
    `SELECT l.rev, l.body FROM databases x
     LEFT JOIN local_documents l ON l.db_id = x.db_id AND l.id = $2
     WHERE x.name = $1`,
    [name, id],
  );
  if (rows.length === 0) throw databaseMissing();
  const row = rows[0];
  return row.rev === null ? undefined : localDocument(id, row.rev, row.body as string);
}
