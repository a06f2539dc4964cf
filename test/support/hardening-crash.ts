/**
 * Crash safety of the real binary: a bounded write storm (documents, bulk documents, user
 * creations, `_config` changes) is cut by SIGKILL at a random moment, then the server is started
 * again on the same data directory (and, for PostgreSQL, the same schema) and everything that was
 * acknowledged must be there. Between runs the files are checked while no server holds them:
 * SQLite's `PRAGMA integrity_check` and every ini file parsing. Shared by
 * test/hardening/crash-safety.test.ts (short) and bench/soak.ts (full).
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseIni } from '../../src/config/ini.js';
import { dropSchema, uniqueSchema } from './backends.js';
import { request, type HttpResponse } from './http.js';
import { startDivan, type RunningDivan } from './process.js';

export interface CrashOptions {
  backend: 'sqlite' | 'postgres';
  /** PostgreSQL server for the `postgres` backend. */
  postgresUrl?: string;
  /** Kill-and-restart rounds. */
  cycles: number;
  /** Concurrent writers during a storm. */
  writers: number;
  /** The storm runs for a random time in this range before the kill (milliseconds). */
  stormMs: [number, number];
  /** Deterministic choice of kill moments and operations. */
  seed: number;
  log?: (line: string) => void;
}

export interface CrashReport {
  backend: string;
  cycles: number;
  acknowledged: { documents: number; users: number; config: number; total: number };
  found: { documents: number; users: number; config: number; total: number };
  /** Acknowledged write requests, updates of the same document included (the ledger keeps the last). */
  acknowledgedWrites: number;
  /** Writes in flight at a kill: neither acknowledged nor required to exist. */
  unacknowledged: number;
  integrityChecks: number;
  iniFilesParsed: number;
  /** Problems found; empty when every acknowledged write survived. */
  problems: string[];
  durationMs: number;
}

const ADMIN: [string, string] = ['crash-admin', 'crash-admin-pass'];

/** A small deterministic PRNG (mulberry32), so a seed replays the same storm decisions. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Ledger {
  /** id → the last acknowledged revision and marker; `pending` when a later write was in flight at a kill. */
  docs: Map<string, { rev: string; marker: string; pending: boolean }>;
  users: Set<string>;
  config: Map<string, string>;
  unacknowledged: number;
}

export async function runCrashCycles(options: CrashOptions): Promise<CrashReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), `divan-crash-${options.backend}-`));
  const configFile = join(dir, 'node.ini');
  const schema = options.backend === 'postgres' ? uniqueSchema() : undefined;
  const iniLines = ['[admins]', `${ADMIN[0]} = ${ADMIN[1]}`, '[chttpd_auth]', 'iterations = 1000', '[log]', 'level = warning'];
  if (schema) iniLines.push('[divan]', 'storage = postgres', `postgres_schema = ${schema}`);
  writeFileSync(configFile, `${iniLines.join('\n')}\n`);
  const env: Record<string, string> = options.postgresUrl ? { DIVAN_POSTGRES_URL: options.postgresUrl } : {};
  const start = (): Promise<RunningDivan> => startDivan(['--port', '0', '--data', dir, '--config', configFile], env);
  const next = random(options.seed);
  const ledger: Ledger = { docs: new Map(), users: new Set(), config: new Map(), unacknowledged: 0 };
  const problems: string[] = [];
  let integrityChecks = 0;
  let iniFilesParsed = 0;
  let acknowledgedWrites = 0;

  const checkFiles = (when: string): void => {
    for (const file of readdirSync(dir)) {
      if (!file.endsWith('.ini')) continue;
      try {
        const sections = parseIni(readFileSync(join(dir, file), 'utf8'));
        if (file === 'node.ini' && !sections.get('admins')?.has(ADMIN[0])) problems.push(`${when}: ${file} lost [admins] ${ADMIN[0]}`);
        iniFilesParsed++;
      } catch (error) {
        problems.push(`${when}: ${file} does not parse: ${(error as Error).message}`);
      }
    }
    const sqlite = join(dir, 'divan.sqlite');
    if (options.backend === 'sqlite' && existsSync(sqlite)) {
      // Checked on a copy (database, WAL and shared memory as the kill left them), so that the
      // check's own recovery does not do the restart's work.
      const copy = mkdtempSync(join(tmpdir(), 'divan-crash-copy-'));
      try {
        for (const suffix of ['', '-wal', '-shm']) if (existsSync(sqlite + suffix)) copyFileSync(sqlite + suffix, join(copy, `divan.sqlite${suffix}`));
        const db = new Database(join(copy, 'divan.sqlite'));
        try {
          const result = db.pragma('integrity_check', { simple: true });
          if (result !== 'ok') problems.push(`${when}: integrity_check says ${String(result)}`);
          integrityChecks++;
        } finally {
          db.close();
        }
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    }
  };

  try {
    for (let cycle = 0; cycle < options.cycles; cycle++) {
      const node = await start();
      const url = node.url;
      const admin = (path: string, init: Parameters<typeof request>[2] = {}): Promise<HttpResponse> => request(url, path, { auth: ADMIN, ...init });
      if (cycle === 0) {
        const created = await admin('/storm', { method: 'PUT' });
        if (created.status !== 201) throw new Error(`cannot create the storm database: ${created.status} ${created.text}`);
      } else {
        await verify(url, admin, ledger, problems, `after kill ${cycle}`);
      }
      const stormFor = options.stormMs[0] + next() * (options.stormMs[1] - options.stormMs[0]);
      const stats = await storm(url, admin, ledger, options.writers, cycle, next, stormFor, node);
      acknowledgedWrites += stats.acknowledged;
      log(`${options.backend} cycle ${cycle + 1}/${options.cycles}: killed after ${Math.round(stormFor)} ms; ${stats.acknowledged} acknowledged, ${stats.inFlight} in flight`);
      checkFiles(`after kill ${cycle + 1}`);
    }
    const node = await start();
    const admin = (path: string, init: Parameters<typeof request>[2] = {}): Promise<HttpResponse> => request(node.url, path, { auth: ADMIN, ...init });
    const found = await verify(node.url, admin, ledger, problems, 'final');
    await node.stop('SIGTERM');
    checkFiles('after the final clean stop');
    const acknowledged = { documents: ledger.docs.size, users: ledger.users.size, config: ledger.config.size, total: 0 };
    acknowledged.total = acknowledged.documents + acknowledged.users + acknowledged.config;
    return {
      backend: options.backend,
      cycles: options.cycles,
      acknowledged,
      found,
      acknowledgedWrites,
      unacknowledged: ledger.unacknowledged,
      integrityChecks,
      iniFilesParsed,
      problems,
      durationMs: Date.now() - started,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (schema && options.postgresUrl) await dropSchema(options.postgresUrl, schema).catch(() => undefined);
  }
}

/** Writers loop until the kill; every acknowledged write goes into the ledger. */
async function storm(
  url: string,
  admin: (path: string, init?: Parameters<typeof request>[2]) => Promise<HttpResponse>,
  ledger: Ledger,
  writers: number,
  cycle: number,
  next: () => number,
  stormFor: number,
  node: RunningDivan,
): Promise<{ acknowledged: number; inFlight: number }> {
  let killed = false;
  let acknowledged = 0;
  let inFlight = 0;
  // The seed decides the mix of operations and the kill moments; how far each writer gets before
  // the kill depends on timing, which no seed can fix.
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; !killed; i++) {
      const roll = next();
      const marker = `c${cycle}-w${w}-i${i}`;
      inFlight++;
      try {
        if (roll < 0.4) {
          const id = `doc-${marker}`;
          const res = await admin(`/storm/${id}`, { method: 'PUT', body: { marker, pad: 'x'.repeat(Math.floor(next() * 2000)) } });
          if (res.status === 201) {
            ledger.docs.set(id, { rev: res.body.rev, marker, pending: false });
            acknowledged++;
          }
        } else if (roll < 0.55) {
          const ids = [...ledger.docs.keys()];
          if (ids.length === 0) continue;
          const id = ids[Math.floor(next() * ids.length)]!;
          const entry = ledger.docs.get(id)!;
          if (entry.pending) continue;
          entry.pending = true;
          const res = await admin(`/storm/${id}`, { method: 'PUT', body: { _rev: entry.rev, marker, updated: true } });
          if (res.status === 201) {
            ledger.docs.set(id, { rev: res.body.rev, marker, pending: false });
            acknowledged++;
          } else if (res.status === 409) {
            entry.pending = false;
          }
        } else if (roll < 0.7) {
          const docs = Array.from({ length: 5 }, (_, k) => ({ _id: `bulk-${marker}-${k}`, marker: `${marker}-${k}` }));
          const res = await admin('/storm/_bulk_docs', { method: 'POST', body: { docs } });
          if (res.status === 201) {
            for (const row of res.body as Array<{ id: string; rev?: string; ok?: boolean }>) {
              if (row.ok) {
                ledger.docs.set(row.id, { rev: row.rev!, marker: row.id.slice(5), pending: false });
                acknowledged++;
              }
            }
          }
        } else if (roll < 0.85) {
          const name = `user-${marker}`;
          const res = await admin(`/_users/org.couchdb.user:${name}`, { method: 'PUT', body: { name, password: `pw-${marker}`, roles: ['storm'], type: 'user' } });
          if (res.status === 201) {
            ledger.users.add(name);
            acknowledged++;
          }
        } else {
          const key = `k-${marker}`;
          const res = await admin(`/_node/_local/_config/storm/${key}`, { method: 'PUT', body: JSON.stringify(`value-${marker}`) });
          if (res.status === 200) {
            ledger.config.set(key, `value-${marker}`);
            acknowledged++;
          }
        }
      } catch {
        // The connection died with the server: this write is unacknowledged.
        ledger.unacknowledged++;
      } finally {
        inFlight--;
      }
    }
  };
  const running = Array.from({ length: writers }, (_, w) => writer(w));
  await new Promise((resolve) => setTimeout(resolve, stormFor));
  // A busy machine may acknowledge no write of some kind in a short storm (a user costs a password
  // hash): the storm goes on until each kind has one, as the tests require, within a wide limit.
  const limit = Date.now() + 60_000;
  while (!(ledger.docs.size > 0 && ledger.users.size > 0 && ledger.config.size > 0) && Date.now() < limit) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const atKill = inFlight;
  killed = true;
  await node.stop('SIGKILL');
  await Promise.allSettled(running);
  return { acknowledged, inFlight: atKill };
}

/** Every acknowledged write is there; counters agree with what is listed. */
async function verify(
  url: string,
  admin: (path: string, init?: Parameters<typeof request>[2]) => Promise<HttpResponse>,
  ledger: Ledger,
  problems: string[],
  when: string,
): Promise<CrashReport['found']> {
  const found = { documents: 0, users: 0, config: 0, total: 0 };
  const all = await admin('/storm/_all_docs');
  const live = new Map<string, string>((all.body?.rows ?? []).map((row: { id: string; value: { rev: string } }) => [row.id, row.value.rev]));
  if (all.body?.total_rows !== live.size) problems.push(`${when}: _all_docs total_rows ${all.body?.total_rows} but ${live.size} rows`);
  const info = await admin('/storm');
  if (info.body?.doc_count !== live.size) problems.push(`${when}: doc_count ${info.body?.doc_count} but ${live.size} live documents`);
  for (const [id, entry] of ledger.docs) {
    const rev = live.get(id);
    const generation = (r: string): number => Number(r.split('-')[0]);
    if (rev === entry.rev) {
      found.documents++;
      continue;
    }
    if (rev !== undefined && entry.pending && generation(rev) === generation(entry.rev) + 1) {
      // The update in flight at the kill was committed but not acknowledged: adopt it.
      const doc = await admin(`/storm/${encodeURIComponent(id)}`);
      ledger.docs.set(id, { rev, marker: doc.body?.marker, pending: false });
      found.documents++;
      continue;
    }
    problems.push(`${when}: ${id} acknowledged at ${entry.rev}, found ${rev ?? 'nothing'}`);
  }
  for (const entry of ledger.docs.values()) entry.pending = false;
  // Spot-check bodies: the acknowledged marker is the stored one.
  for (const [id, entry] of [...ledger.docs].slice(-20)) {
    const doc = await admin(`/storm/${encodeURIComponent(id)}`);
    if (doc.body?.marker !== entry.marker) problems.push(`${when}: ${id} body ${JSON.stringify(doc.body)} is not ${entry.marker}`);
  }
  for (const name of ledger.users) {
    const res = await admin(`/_users/org.couchdb.user:${encodeURIComponent(name)}`);
    if (res.status === 200 && Array.isArray(res.body.roles) && typeof res.body.derived_key === 'string') found.users++;
    else problems.push(`${when}: user ${name} acknowledged, GET answers ${res.status}`);
  }
  // Logging in proves the stored hash is whole, not only present: a sample per round.
  for (const name of [...ledger.users].slice(-3)) {
    const res = await request(url, '/_session', { auth: [name, `pw-${name.slice('user-'.length)}`] });
    if (res.body?.userCtx?.name !== name) problems.push(`${when}: user ${name} cannot log in: ${res.status} ${res.text}`);
  }
  const section = await admin('/_node/_local/_config/storm');
  for (const [key, value] of ledger.config) {
    if (section.body?.[key] === value) found.config++;
    else problems.push(`${when}: [storm] ${key} acknowledged as ${value}, found ${JSON.stringify(section.body?.[key])}`);
  }
  found.total = found.documents + found.users + found.config;
  return found;
}
