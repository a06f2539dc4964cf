// `_changes?filter=_selector` with `$regex`: matched by RE2 (linear time), PCRE features RE2 cannot
// run refused with 400, and selectors bounded in size.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

describe('_changes?filter=_selector with $regex', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    assert.equal((await server.admin('/rx', { method: 'PUT' })).status, 201);
    const docs = [
      { _id: 'a', name: 'Note-1' },
      { _id: 'b', name: 'note-2' },
      { _id: 'c', name: 'task-3' },
      { _id: 'd', name: 'αβγ' },
      { _id: 'e', name: `${'a'.repeat(16)}!` },
      { _id: 'f', name: 42 },
    ];
    assert.equal((await server.admin('/rx/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
  });
  after(async () => server.close());

  const ids = async (selector: unknown): Promise<string[]> => {
    const res = await server.admin('/rx/_changes?filter=_selector', { method: 'POST', body: { selector } });
    assert.equal(res.status, 200, res.text);
    return (res.body.results as { id: string }[]).map((row) => row.id).sort();
  };

  test('anchors, classes, case folding and unicode select the documents as PCRE would', async () => {
    assert.deepEqual(await ids({ name: { $regex: '^note-\\d$' } }), ['b']);
    assert.deepEqual(await ids({ name: { $regex: '(?i)^note-' } }), ['a', 'b']);
    assert.deepEqual(await ids({ name: { $regex: '-[0-9]' } }), ['a', 'b', 'c']);
    assert.deepEqual(await ids({ name: { $regex: '^\\p{Greek}{3}$' } }), ['d']);
    assert.deepEqual(await ids({ name: { $not: { $regex: 'e' } } }), ['c', 'd', 'e', 'f'], 'a number is not matched by $regex, so $not holds');
  });

  test('nested quantifiers such as ^(a+)+$ match what PCRE would', async () => {
    assert.deepEqual(await ids({ name: { $regex: '^(a+)+$' } }), []);
    assert.deepEqual(await ids({ name: { $regex: '^(a+)+!$' } }), ['e']);
  });

  const refusals: [string, string, RegExp][] = [
    ['a backreference', '(a)\\1', /^Bad argument for operator \$regex: "\(a\)\\\\1": invalid escape sequence: `\\1` \(Divan matches with RE2: backreferences, lookaround, possessive quantifiers and atomic groups are not supported\)$/],
    ['a lookahead', 'note(?=-)', /not supported/],
    ['a lookbehind', '(?<=note)-', /not supported/],
    ['a pattern that does not parse', '[a-', /^Bad argument for operator \$regex: "\[a-": missing closing \]/],
    ['a pattern too large to compile', 'x{1000}', /too large/],
  ];
  for (const [title, pattern, reason] of refusals) {
    test(`${title} is 400 bad_request naming the pattern`, async () => {
      const res = await server.admin('/rx/_changes?filter=_selector', { method: 'POST', body: { selector: { name: { $regex: pattern } } } });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error, 'bad_request');
      assert.match(res.body.reason, reason);
    });
  }

  test('a selector with too many values is 400', async () => {
    const res = await server.admin('/rx/_changes?filter=_selector', { method: 'POST', body: { selector: { name: { $in: Array.from({ length: 20_000 }, (_, i) => `n${i}`) } } } });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.body, { error: 'bad_request', reason: 'Invalid selector: more than 10000 values' });
  });

  test('a selector feed over several storage batches answers every match', async () => {
    assert.equal((await server.admin('/long', { method: 'PUT' })).status, 201);
    const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: `d${String(i).padStart(5, '0')}`, k: i % 3 === 0 ? 'keep' : 'drop' }));
    assert.equal((await server.admin('/long/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    const res = await server.admin('/long/_changes?filter=_selector', { method: 'POST', body: { selector: { k: { $regex: '^ke+p$' } } } });
    assert.equal(res.status, 200);
    assert.equal(res.body.results.length, 1000);
  });
});
