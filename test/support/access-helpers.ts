/**
 * Three users sharing one database with per-document access (`PUT /todos?access=true`): alice and
 * bob, carol (role `team`, as alice), all members through the role `todo`; dave is a member with
 * no document of his own; eve is a user but no member.
 */
import type { HttpOptions, HttpResponse } from './http.js';
import type { TestServer } from './server.js';
import { createUser } from './users-helpers.js';

export const ACCESS_DB = 'todos';
export const PASSWORDS: Readonly<Record<string, string>> = { alice: 'a-pw', bob: 'b-pw', carol: 'c-pw', dave: 'd-pw', eve: 'e-pw' };

export async function seedAccessDb(server: TestServer): Promise<void> {
  await createUser(server, 'alice', PASSWORDS['alice']!, ['todo', 'team']);
  await createUser(server, 'bob', PASSWORDS['bob']!, ['todo']);
  await createUser(server, 'carol', PASSWORDS['carol']!, ['todo', 'team']);
  await createUser(server, 'dave', PASSWORDS['dave']!, ['todo']);
  await createUser(server, 'eve', PASSWORDS['eve']!, []);
  const created = await server.admin(`/${ACCESS_DB}?access=true`, { method: 'PUT' });
  if (created.status !== 201) throw new Error(`creating ${ACCESS_DB}: ${created.status} ${created.text}`);
  const security = { admins: { names: [], roles: [] }, members: { names: [], roles: ['todo'] } };
  const secured = await server.admin(`/${ACCESS_DB}/_security`, { method: 'PUT', body: security });
  if (secured.status !== 200) throw new Error(`securing ${ACCESS_DB}: ${secured.status} ${secured.text}`);
}

/** A request as `user` (Basic), on the access database. */
export function as(server: TestServer, user: string, path: string, options: HttpOptions = {}): Promise<HttpResponse> {
  return server.request(`/${ACCESS_DB}${path}`, { ...options, auth: [user, PASSWORDS[user]!] });
}

export const MISSING = { error: 'not_found', reason: 'missing' } as const;
export const ADMINS_ONLY = { error: 'forbidden', reason: 'In a database with per-document access this endpoint is for database admins.' } as const;
