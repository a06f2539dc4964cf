import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ActiveTasks } from '../../../src/tasks/active-tasks.js';

describe('active tasks registry', () => {
  test('a begun task is listed with node, pid and times until it finishes', () => {
    const tasks = new ActiveTasks(() => 'divan@node1');
    const handle = tasks.begin({ type: 'database_compaction', database: 'db', progress: 0 });
    const [task] = tasks.list();
    assert.equal(task?.['type'], 'database_compaction');
    assert.equal(task?.['node'], 'divan@node1');
    assert.match(String(task?.['pid']), /^<0\.\d+\.0>$/);
    assert.equal(typeof task?.['started_on'], 'number');
    handle.update({ progress: 50 });
    assert.equal(tasks.list()[0]?.['progress'], 50);
    handle.finish();
    handle.finish();
    assert.deepEqual(tasks.list(), []);
  });

  test('list returns copies: changing one does not change the registry', () => {
    const tasks = new ActiveTasks(() => 'n');
    tasks.begin({ type: 'indexer' });
    tasks.list()[0]!['type'] = 'tampered';
    assert.equal(tasks.list()[0]?.['type'], 'indexer');
  });

  test('tasks keep distinct pids and their start order', () => {
    const tasks = new ActiveTasks(() => 'n');
    tasks.begin({ type: 'a' });
    const second = tasks.begin({ type: 'b' });
    tasks.begin({ type: 'c' });
    second.finish();
    assert.deepEqual(tasks.list().map((task) => task['type']), ['a', 'c']);
    assert.notEqual(tasks.list()[0]?.['pid'], tasks.list()[1]?.['pid']);
  });
});
