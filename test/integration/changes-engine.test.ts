import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { FeedArgs, Filter } from '../../src/changes/feed.js';
import { LiveFeed, normalFeed, type FeedWriter } from '../../src/changes/feeds.js';
import { Config } from '../../src/config/config.js';
import type { OpenedDatabase } from '../../src/databases/opened-database.js';
import { writeDocument } from '../../src/databases/document-writes.js';
import { sequencesOf } from '../../src/databases/sequences.js';
import { requestObject } from '../../src/design/request-object.js';
import type { DesignDoc } from '../../src/js/sandbox.js';
import type { JsonObject } from '../../src/json/json.js';
import { Logger } from '../../src/log/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { wireData, type DataLayer } from '../../src/wiring/data-layer.js';
import { BACKENDS, OPEN_SECURITY } from '../support/backends.js';

/** The `_changes` engine (src/changes/) driven without any HTTP: a database layer on real storage, a sink for the text. */
const ADMIN = { name: null, roles: ['_admin'] };
const FILTER = 'function (doc, req) { return doc.type === req.query.type; }';
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function config(): Promise<Config> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-changes-'));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'default.ini'), '');
  return Config.load({ defaultsFile: path.join(dir, 'default.ini'), files: [], writableFile: path.join(dir, 'local.ini') });
}

async function argsFor(opened: OpenedDatabase, filter: Filter, feed: FeedArgs['feed'], limit?: number): Promise<FeedArgs> {
  const sequences = sequencesOf(await opened.info());
  return { opened, feed, allLeaves: false, includeDocs: false, attachments: false, conflicts: false, descending: false, since: 0, sequences, filter, deadline: Date.now() + 600_000, ...(limit === undefined ? {} : { limit }) };
}

const write = (opened: OpenedDatabase, doc: JsonObject): Promise<unknown> => writeDocument(opened, doc, { newEdits: true });

for (const backend of BACKENDS) {
  describe(`changes engine without HTTP (${backend.name})`, () => {
    async function withLayer(work: (data: DataLayer, opened: OpenedDatabase) => Promise<void>): Promise<void> {
      const storage = await backend.open();
      const log = new Logger('error', { write: () => {} });
      const data = await wireData(await config(), log, storage.storage, undefined, new Metrics(() => 60));
      try {
        await data.databases.ensure('db', OPEN_SECURITY);
        await work(data, await data.databases.openListing('db', ADMIN));
      } finally {
        data.changes.close();
        await data.sandbox.close();
        await storage.cleanup();
      }
    }

    test('a normal feed through a design document\'s filter function, with CouchDB\'s req built from plain facts', () =>
      withLayer(async (data, opened) => {
        await write(opened, { _id: '_design/app', filters: { byType: FILTER } });
        for (const [id, type] of [['a1', 'a'], ['b1', 'b'], ['a2', 'a']] as const) await write(opened, { _id: id, type });
        const { doc } = await opened.readDocument('_design/app', undefined, {});
        const facts = { method: 'GET', segments: ['db', '_changes'], rawPath: '/db/_changes?type=a', query: new URLSearchParams('type=a'), rawHeaders: [], cookie: undefined, peer: '127.0.0.1', userCtx: ADMIN };
        const req = requestObject(facts, { name: 'db', info: null, secObj: {} });
        const filter: Filter = { kind: 'function', ddoc: doc as DesignDoc, name: 'byType', req, sandbox: data.sandbox, log: new Logger('error', { write: () => {} }) };
        const answer = await normalFeed(await argsFor(opened, filter, 'normal'), async () => 4);
        assert.deepEqual((answer['results'] as JsonObject[]).map((row) => row['id']), ['a1', 'a2']);
      }));

    test('a live feed wakes on writes and ends at its limit, writing through its sink', () =>
      withLayer(async (data, opened) => {
        const written: string[] = [];
        const writer: FeedWriter = { change: (entry) => `${String(entry['id'])}\n`, heartbeat: () => '\n', waiting: () => '', end: (lastSeq, pending) => `end ${lastSeq} ${pending}\n` };
        const sink = { started: false, signal: new AbortController().signal, write: async (text: string) => void written.push(text) };
        const args = await argsFor(opened, { kind: 'doc_ids', ids: ['x', 'z'] }, 'continuous', 2);
        const feed = new LiveFeed(data.changes, args, writer, sink).run();
        for (const id of ['x', 'y', 'z']) await write(opened, { _id: id });
        await feed;
        assert.deepEqual(written, ['x\n', 'z\n', 'end 3 0\n']);
      }));
  });
}
