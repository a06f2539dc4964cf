import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HookRegistry } from '../../../src/databases/hook-registry.js';
import { Logger } from '../../../src/log/logger.js';

function collectingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new Logger('info', { write: (line: string) => lines.push(line) } as never), lines };
}

test('hooks apply only to the databases they name, in the order they were registered', () => {
  const { log } = collectingLogger();
  const hooks = new HookRegistry(log);
  hooks.register({ name: 'first', appliesTo: () => true });
  hooks.register({ name: 'users', appliesTo: (db) => db === '_users' });
  hooks.register({ name: 'last', appliesTo: () => true });
  assert.deepEqual(hooks.for('_users').map((h) => h.name), ['first', 'users', 'last']);
  assert.deepEqual(hooks.for('other').map((h) => h.name), ['first', 'last']);
});

test('a failing afterWrite hook is logged and the later hooks still run, so a durable write never turns into an error', async () => {
  const { log, lines } = collectingLogger();
  const hooks = new HookRegistry(log);
  const seen: string[] = [];
  hooks.register({ name: 'broken cache', appliesTo: () => true, afterWrite: () => { throw new Error('cache down'); } });
  hooks.register({ name: 'feeds', appliesTo: () => true, afterWrite: ({ db, ids }) => { seen.push(`${db}:${String(ids)}`); } });
  await hooks.afterWrite({ db: 'db', ids: ['a', 'b'] });
  assert.deepEqual(seen, ['db:a,b']);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /broken cache: after a write to "db": cache down/);
});
