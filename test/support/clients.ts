// Shared set-up for the real-client tests (test/clients/): one real Divan binary per test file,
// with users and databases created by the admin over plain HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, type HttpResponse } from './http.js';
import { startDivan, type RunningDivan } from './process.js';

export const ADMIN_NAME = 'admin';
export const ADMIN_PASSWORD = 'admin-pass';
export const ADMIN: [string, string] = [ADMIN_NAME, ADMIN_PASSWORD];

export interface ClientServer {
  url: string;
  divan: RunningDivan;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

/** Starts the compiled binary on a free port, with a fresh data directory and `admin`/`admin-pass` as server admin. */
export async function startClientServer(): Promise<ClientServer> {
  const data = mkdtempSync(join(tmpdir(), 'divan-clients-'));
  let divan: RunningDivan;
  try {
    divan = await startDivan(['--port', '0', '--data', data], { COUCHDB_USER: ADMIN_NAME, COUCHDB_PASSWORD: ADMIN_PASSWORD });
  } catch (error) {
    rmSync(data, { recursive: true, force: true });
    throw error;
  }
  return {
    url: divan.url,
    divan,
    close: async () => {
      try {
        await divan.stop();
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    },
  };
}

/** One line describing a response, for assertion messages. */
export function describeResponse(res: HttpResponse): string {
  const cookie = res.headers['set-cookie'];
  return `${res.status} ${res.text.trim()}${cookie ? ` Set-Cookie: ${JSON.stringify(cookie)}` : ''}`;
}

function expectStatus(what: string, res: HttpResponse, ...statuses: number[]): void {
  if (!statuses.includes(res.status)) throw new Error(`${what}: expected ${statuses.join(' or ')}, server answered ${describeResponse(res)}`);
}

/** `PUT /_users/org.couchdb.user:NAME` as the server admin. */
export async function createUser(url: string, name: string, password: string, roles: string[] = []): Promise<void> {
  const res = await request(url, `/_users/${encodeURIComponent(`org.couchdb.user:${name}`)}`, {
    method: 'PUT',
    auth: ADMIN,
    body: { name, password, roles, type: 'user' },
  });
  expectStatus(`creating user ${name}`, res, 201, 202);
}

/** `PUT /DB` then `PUT /DB/_security` with these member names, as the server admin. */
export async function createDatabase(url: string, db: string, memberNames: string[]): Promise<void> {
  expectStatus(`creating database ${db}`, await request(url, `/${db}`, { method: 'PUT', auth: ADMIN }), 201, 202);
  const security = await request(url, `/${db}/_security`, {
    method: 'PUT',
    auth: ADMIN,
    body: { admins: { names: [], roles: [] }, members: { names: memberNames, roles: [] } },
  });
  expectStatus(`setting ${db}/_security`, security, 200);
}

/**
 * Lets users read and update their own `_users` document, as a CouchDB 3 deployment must do for
 * self-service password changes: `[couchdb] users_db_security_editable = true` through the
 * `_config` API, then an open `_users/_security` (the per-document owner rules still apply).
 */
export async function openUsersDatabase(url: string): Promise<void> {
  const config = await request(url, '/_node/_local/_config/couchdb/users_db_security_editable', { method: 'PUT', auth: ADMIN, body: '"true"' });
  expectStatus('setting couchdb/users_db_security_editable', config, 200);
  const security = await request(url, '/_users/_security', {
    method: 'PUT',
    auth: ADMIN,
    body: { admins: { names: [], roles: [] }, members: { names: [], roles: [] } },
  });
  expectStatus('opening _users/_security', security, 200);
}

/** A raw form login, only to explain a failure (shows the Set-Cookie the clients had to deal with). */
export async function rawLogin(url: string, name: string, password: string): Promise<string> {
  const res = await request(url, '/_session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `name=${encodeURIComponent(name)}&password=${encodeURIComponent(password)}`,
  });
  return `raw POST /_session answered ${describeResponse(res)}`;
}
