/**
 * Attachment chunks of the SQLite backend live in a second file next to the main one
 * (`<file>-attachments`), attached to the same connection as schema `att`: it has 64 KiB pages
 * (a 256 KiB chunk is 4 pages rather than a chain of 64) and a small page cache of its own, so
 * streaming an attachment neither crawls through overflow pages nor fills the documents' cache.
 *
 * Only chunks are there; which blobs exist and who names them stays in the main file, so a
 * revision and its references commit atomically. A commit touching both files is atomic per file
 * only, so chunks are always written (and fsynced) before the blob row that makes them reachable,
 * and removed after it: a crash in between leaves unreachable chunks, which the compaction sweep
 * removes, never a reachable blob without its bytes.
 */
import type { Connection } from './sqlite-driver.js';

const CHUNK_PAGE_SIZE = 65536;
/** Page cache of the chunk file, in KiB (SQLite's negative `cache_size`). */
const CHUNK_CACHE_KIB = 2048;

/** The chunk file of a main database file. */
export function chunkFileOf(file: string): string {
  return `${file}-attachments`;
}

/** Attaches (creating if needed) the chunk file as schema `att`, with the same durability as the main file. */
export function attachChunkFile(db: Connection, file: string): void {
  db.prepare('ATTACH DATABASE ? AS att').run(file);
  // Takes effect only on a new, empty file: before its first table.
  db.pragma(`att.page_size = ${CHUNK_PAGE_SIZE}`);
  const mode = db.pragma('att.journal_mode = WAL', { simple: true });
  if (mode !== 'wal') throw new Error(`journal mode of ${file} is ${String(mode)}, WAL is required`);
  db.pragma('att.synchronous = FULL');
  db.pragma(`att.cache_size = -${CHUNK_CACHE_KIB}`);
  db.exec(`CREATE TABLE IF NOT EXISTS att.attachment_chunks (
    blob_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (blob_id, idx)
  )`);
}
