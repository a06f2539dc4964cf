/**
 * Documents for the backfill of the per-principal rows (schema step of both backends): every kind
 * of `_access` the write path handles, so the rows a migration computes can be compared with those
 * the writes kept.
 */
import assert from 'node:assert/strict';
import type { DocumentEdit, JsonObject, Storage } from '../../src/storage/storage.js';

async function put(storage: Storage, edit: Omit<DocumentEdit, 'deleted'> & { deleted?: boolean }): Promise<string> {
  const [result] = await storage.writeDocuments('db', [{ deleted: false, ...edit }], { newEdits: true });
  assert.ok(result!.ok, JSON.stringify(result));
  return result!.rev;
}

export async function writeAccessDocuments(storage: Storage): Promise<void> {
  await storage.createDatabase('db', {});
  await put(storage, { id: 'a1', body: { _access: ['alice'] } as JsonObject });
  await put(storage, { id: 't1', body: { _access: ['team', 'alice', 'team'], text: 'nul \u0000 inside' } as JsonObject });
  const first = await put(storage, { id: 'moved', body: { _access: ['alice', 'bob'] } as JsonObject });
  await put(storage, { id: 'moved', body: { _access: ['bob', 'carol'] } as JsonObject, baseRev: first });
  const gone = await put(storage, { id: 'gone', body: { _access: ['bob'] } as JsonObject });
  await put(storage, { id: 'gone', body: { _access: ['bob'] } as JsonObject, baseRev: gone, deleted: true });
  await put(storage, { id: 'odd', body: { _access: ['alice', 1] } as JsonObject });
  await put(storage, { id: 'empty', body: { _access: ['', 'dave'] } as JsonObject });
  await put(storage, { id: 'named', body: { note: 'mentions "_access" in a value', _access: 'alice' } as JsonObject });
  await put(storage, { id: 'plain', body: { x: 1 } });
  await put(storage, { id: '_design/app', body: { views: {}, _access: ['alice'] } as JsonObject });
}

/** What a user's listing and feed show, to compare before and after the backfill. */
export async function accessListings(storage: Storage): Promise<unknown[]> {
  const seen: unknown[] = [];
  for (const principals of [['', 'alice', 'team'], ['', 'bob'], ['', 'carol'], ['', 'dave'], ['']]) {
    seen.push((await storage.access.listDocuments('db', principals, {})).rows.map((row) => row.id));
    seen.push((await storage.access.changes('db', principals, { since: 0 })).map((row) => [row.id, row.seq, row.deleted]));
    seen.push(await storage.access.stats('db', principals, 0));
  }
  return seen;
}
