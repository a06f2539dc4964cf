// POST /{db}/{docid} with multipart/form-data (CouchDB's form upload): `_rev` or `_doc`, and
// `_attachments` file fields; only multipart/form-data, and only with a Referer of this host.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

const AUTH = `Basic ${Buffer.from('root:r00t-pass').toString('base64')}`;
const md5 = (bytes: Buffer): string => `md5-${createHash('md5').update(bytes).digest('base64')}`;

async function post(server: TestServer, path: string, form: FormData, headers: Record<string, string> = { Referer: `${server.url}/_utils/` }): Promise<{ status: number; body: Record<string, unknown>; etag: string | null }> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', body: form, headers: { Authorization: AUTH, ...headers } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, etag: response.headers.get('etag') };
}

function fileForm(fields: Record<string, string>, files: Array<[string, Buffer, string]>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [filename, bytes, type] of files) form.append('_attachments', new Blob([bytes], { type }), filename);
  return form;
}

describeOnEachBackend('multipart/form-data uploads', (server) => {
  test('a form with _rev and files adds them as attachments, keeps the others, answers 201 {ok,id,rev}', async () => {
    await server().admin('/forms', { method: 'PUT' });
    const first = await server().admin('/forms/doc', { method: 'PUT', body: { a: 1, _attachments: { 'old.txt': { content_type: 'text/plain', data: Buffer.from('old').toString('base64') } } } });
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
    const answer = await post(server(), '/forms/doc', fileForm({ _rev: first.body.rev }, [['pic.png', png, 'image/png'], ['b.txt', Buffer.from('bee'), 'text/plain']]));
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.body['ok'], true);
    assert.equal(answer.body['id'], 'doc');
    assert.match(String(answer.body['rev']), /^2-/);
    assert.equal(answer.etag, `"${answer.body['rev']}"`);
    const doc = (await server().admin('/forms/doc')).body;
    assert.equal(doc.a, 1);
    assert.deepEqual(Object.keys(doc._attachments).sort(), ['b.txt', 'old.txt', 'pic.png']);
    assert.deepEqual(doc._attachments['pic.png'], { content_type: 'image/png', revpos: 2, digest: md5(png), length: png.length, stub: true });
    assert.equal(doc._attachments['old.txt'].revpos, 1);
    const read = await fetch(`${server().url}/forms/doc/pic.png`, { headers: { Authorization: AUTH } });
    assert.ok(Buffer.from(await read.arrayBuffer()).equals(png));
    const replaced = await post(server(), '/forms/doc', fileForm({ _rev: String(answer.body['rev']) }, [['b.txt', Buffer.from('new bee'), 'text/plain']]));
    assert.equal(replaced.status, 201);
    assert.equal((await server().admin('/forms/doc/b.txt')).text, 'new bee');
  });

  test('a _doc field gives the document; a stale _rev is a conflict', async () => {
    const doc = await post(server(), '/forms/fromdoc', fileForm({ _doc: JSON.stringify({ title: 'hi' }) }, [['t.txt', Buffer.from('text'), 'text/plain']]));
    assert.equal(doc.status, 201, JSON.stringify(doc.body));
    assert.equal((await server().admin('/forms/fromdoc')).body.title, 'hi');
    const first = await server().admin('/forms/stale', { method: 'PUT', body: {} });
    await server().admin('/forms/stale', { method: 'PUT', body: { _rev: first.body.rev } });
    const stale = await post(server(), '/forms/stale', fileForm({ _rev: first.body.rev }, [['t.txt', Buffer.from('text'), 'text/plain']]));
    assert.equal(stale.status, 409);
    assert.equal(stale.body['error'], 'conflict');
  });

  test('another Content-Type is 415 bad_content_type "Content-Type must be multipart/form-data"', async () => {
    const answer = await fetch(`${server().url}/forms/doc`, { method: 'POST', body: '{}', headers: { Authorization: AUTH, 'Content-Type': 'application/json', Referer: `${server().url}/` } });
    assert.equal(answer.status, 415);
    assert.deepEqual(await answer.json(), { error: 'bad_content_type', reason: 'Content-Type must be multipart/form-data' });
    const noBoundary = await fetch(`${server().url}/forms/doc`, { method: 'POST', body: 'x', headers: { Authorization: AUTH, 'Content-Type': 'multipart/form-data', Referer: `${server().url}/` } });
    assert.equal(noBoundary.status, 400);
  });

  test('without a Referer of this host (a form on another site) nothing is written', async () => {
    const form = (): FormData => fileForm({ _doc: '{}' }, [['x.txt', Buffer.from('x'), 'text/plain']]);
    const none = await post(server(), '/forms/csrf', form(), {});
    assert.deepEqual([none.status, none.body['reason']], [400, 'Referer header required.']);
    const other = await post(server(), '/forms/csrf', form(), { Referer: 'https://evil.example/page' });
    assert.deepEqual([other.status, other.body['reason']], [400, 'Referer header must match host.']);
    const origin = await post(server(), '/forms/csrf', form(), { Referer: `${server().url}/`, Origin: 'https://evil.example' });
    assert.equal(origin.status, 400);
    assert.equal((await server().admin('/forms/csrf')).status, 404);
  });
});
