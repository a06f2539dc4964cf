/**
 * Replication ids as CouchDB 3 computes them (version 4). The expected ids were computed by Erlang
 * itself: `erlang:md5(term_to_binary([Uuid, Source, Target | Rest], [{minor_version, 1}]))` with the
 * `{remote, User, Host, Port, Path, Headers, undefined}` terms couch_replicator_ids builds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEndpoint } from '../../../src/replicator/endpoint.js';
import { replicationId, type FilterPart } from '../../../src/replicator/replication-id.js';

const UUID = '8f1b7d2c0a9e4b6f8d3c2e1a0b9f8e7d';
const PROTOCOLS = ['http', 'https'];
const source = parseEndpoint('http://127.0.0.1:5984/src', 'source', PROTOCOLS);
const bob = parseEndpoint({ url: 'https://couch.example.com/tgt', auth: { basic: { username: 'bob', password: 'secret' } } }, 'target', PROTOCOLS);
const bearer = parseEndpoint({ url: 'http://10.0.0.2:15984/tgt', headers: { Authorization: 'Bearer abc.def' } }, 'target', PROTOCOLS);

const cases: { name: string; target: typeof bob; filter: FilterPart; winning?: boolean; since?: number | string; id: string }[] = [
  { name: 'no filter, Basic credentials on the target', target: bob, filter: { kind: 'none' }, id: '7bd289210ba0d1b0c3a6158b12e8472e' },
  { name: 'doc_ids, a non-default port and a bearer header', target: bearer, filter: { kind: 'doc_ids', ids: ['a', 'b'] }, id: '615f3cfbfeba87f08ee0ddfe63940c09' },
  { name: 'a selector', target: bob, filter: { kind: 'selector', selector: { type: 'post' } }, id: 'dc4131dbbaa6b105bdcadca2b5a87804' },
  {
    name: 'a JS filter with query_params, winning_revs_only and an integer since_seq',
    target: bob,
    filter: { kind: 'user', code: 'function(doc, req) { return true; }', queryParams: { k: 'v' } },
    winning: true,
    since: 5,
    id: '0788205be4f9fd5a651924ed254f164f',
  },
  { name: 'the _view filter and a string since_seq', target: bob, filter: { kind: 'view', name: '_view', queryParams: { view: 'd/v' } }, since: '3-g1AAAA', id: '19389105a081df3738b95ad2e58da925' },
];

for (const entry of cases) {
  test(`the replication id matches CouchDB's: ${entry.name}`, () => {
    const { baseId } = replicationId({
      serverUuid: UUID,
      source,
      target: entry.target,
      filter: entry.filter,
      winningRevsOnly: entry.winning === true,
      ...(entry.since !== undefined ? { sinceSeq: entry.since } : {}),
      continuous: false,
      createTarget: false,
    });
    assert.equal(baseId, entry.id);
  });
}

test('credentials from the URL, auth.basic or a Basic header give the same id, and the password never counts', () => {
  const ids = [
    'https://bob:secret@couch.example.com/tgt',
    { url: 'https://couch.example.com/tgt', auth: { basic: { username: 'bob', password: 'other' } } },
    { url: 'https://couch.example.com/tgt/', headers: { Authorization: `Basic ${Buffer.from('bob:third').toString('base64')}` } },
  ].map((spec) => replicationId({ serverUuid: UUID, source, target: parseEndpoint(spec as never, 'target', PROTOCOLS), filter: { kind: 'none' }, winningRevsOnly: false, continuous: false, createTarget: false }).baseId);
  assert.deepEqual(ids, Array(3).fill('7bd289210ba0d1b0c3a6158b12e8472e'));
});

test('continuous and create_target extend the id as CouchDB does', () => {
  const { extension } = replicationId({ serverUuid: UUID, source, target: bob, filter: { kind: 'none' }, winningRevsOnly: false, continuous: true, createTarget: true });
  assert.equal(extension, '+continuous+create_target');
});
