/**
 * Property test for ini lines through their HTTP entry point, `PUT/DELETE /_node/_local/_config`:
 * hostile sections, keys and values (line breaks, `;` comments, ` = `, `[`, NUL, lone surrogates,
 * look-alike characters). Each write is refused with a 4xx or stored so that the file on disk
 * reads back as exactly what the API answers; no write adds a section or key it did not name
 * (ini injection), `[admins]` never changes, and the server starts again on the same files.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';

import { parseIni } from '../../src/config/ini.js';
import { hostileString, isWellFormed } from '../support/hardening-arbitraries.js';
import {
  HARDENING_INI,
  assertAlive,
  assertCouchAnswer,
  assertNoUnexpectedErrors,
  basicValue,
  crashWatch,
  property,
  prototypeGuard,
  raw,
  type RawResponse,
} from '../support/hardening.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

/** Sections whose change would alter the server under test; hostile names never equal these. */
const LIVE_SECTIONS = new Set(['admins', 'chttpd', 'chttpd_auth', 'couch_httpd_auth', 'chttpd_auth_lockout', 'chttpd_auth_cache', 'couch_passwords_cache', 'couchdb', 'log', 'divan', 'httpd', 'ssl', 'cors', 'jwt_auth', 'jwt_keys', 'uuids', 'vendor', 'cluster']);

describe('ini lines through /_node/_local/_config (property, HTTP)', () => {
  let server: TestServer;
  let port: number;
  const written = new Map<string, string | undefined>();
  const unpolluted = prototypeGuard();
  const crashes = crashWatch();

  before(async () => {
    server = await startServer({ ini: HARDENING_INI, keepData: true });
    port = Number(new URL(server.url).port);
  });

  after(async () => {
    crashes.stop();
    await server.close();
    rmSync(server.dataDir, { recursive: true, force: true });
  });

  const configPath = (section: string, key: string): string => `/_node/_local/_config/${encodeURIComponent(section)}/${encodeURIComponent(key)}`;

  async function admin(method: string, target: string, body?: string): Promise<RawResponse> {
    const headers: [string, string][] = [['Authorization', basicValue(...ADMIN)]];
    if (body !== undefined) headers.push(['Content-Type', 'application/json']);
    const res = await raw(port, { method, target, headers, body }, 10000);
    assertCouchAnswer(res, `${method} ${target} ${body ?? ''}`);
    return res;
  }

  test('PUT and DELETE of hostile sections, keys and values: 4xx, or stored exactly as the API reads it', async (t) => {
    const p = property('HTTP _config writes (ini lines)', 2000);
    const name = fc
      .oneof(
        hostileString(12),
        fc.constantFrom('s', 'a.b', 'x]\n[admins', 'k = v', 'rsa:x=', '[s]', ';c', ' s', 's ', 'a;b', 'a ;b', '__proto__', 'constructor', 'hasOwnProperty', 'x\u0000y'),
      )
      .filter((text) => text !== '' && isWellFormed(text) && !LIVE_SECTIONS.has(text));
    const value = fc.oneof(
      hostileString(24),
      fc.constantFrom('x\n[admins]\nroot = hacked', 'v ; comment', 'v;c', '; c', ' v ', '', 'a = b', '[s]', '\u00a0v\u00a0', 'v\r\nk2 = w', 'line\u2028two', 'v\u0000', '\ud800', 'true'),
    );
    await fc.assert(
      fc.asyncProperty(name, name, value, fc.constantFrom('PUT', 'PUT', 'PUT', 'DELETE'), async (section, key, text, method) => {
        p.count();
        const target = configPath(section, key);
        const res = await admin(method, target, method === 'PUT' ? JSON.stringify(text) : undefined);
        const id = JSON.stringify([section, key]);
        if (method === 'DELETE') {
          if (res.status === 200) written.set(id, undefined);
          return;
        }
        if (res.status !== 200) return;
        const read = await admin('GET', target);
        assert.equal(read.status, 200);
        // The server trims the value, as CouchDB does.
        assert.equal(read.json, text.trim());
        written.set(id, read.json as string);
      }),
      p.options,
    );
    p.report(t);
  });

  test('the writable file parses back to exactly what the API answered, with [admins] untouched', () => {
    const file = readFileSync(server.app.config.writableFile, 'utf8');
    const parsed = parseIni(file);
    for (const [id, value] of written) {
      const [section, key] = JSON.parse(id) as [string, string];
      assert.equal(parsed.get(section)?.get(key), value, `[${section}] ${key} on disk`);
    }
    // No hostile value opened a section or key that was not named by a write.
    const named = new Set([...written.keys()].map((id) => (JSON.parse(id) as [string, string])[0]));
    for (const section of parsed.keys()) {
      assert.ok(named.has(section) || ['admins', 'log', 'chttpd_auth', 'chttpd_auth_lockout', 'chttpd', 'couchdb'].includes(section), `unexpected section [${section}]`);
    }
    assert.deepEqual([...parsed.get('admins')!.keys()], [ADMIN[0]]);
    assert.match(parsed.get('admins')!.get(ADMIN[0])!, /^-pbkdf2:sha256-[0-9a-f]+,[0-9a-f]+,1000$/);
  });

  test('the server restarts on the same files, answers GET /, and reads every value back', async () => {
    await assertAlive(port);
    assertNoUnexpectedErrors(server.logs);
    crashes.check();
    unpolluted();
    const dataDir = server.dataDir;
    await server.close();
    server = await startServer({ dataDir, keepData: true });
    port = Number(new URL(server.url).port);
    await assertAlive(port, 'after the restart');
    let checked = 0;
    for (const [id, value] of written) {
      const [section, key] = JSON.parse(id) as [string, string];
      const res = await admin('GET', configPath(section, key));
      if (value === undefined) assert.equal(res.status, 404);
      else assert.equal(res.json, value, `[${section}] ${key} after the restart`);
      checked++;
    }
    assert.ok(checked > 50, `${checked} keys written and checked`);
  });
});
