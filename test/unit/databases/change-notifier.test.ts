import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeNotifier } from '../../../src/databases/change-notifier.js';

describe('ChangeNotifier', () => {
  it('wakes the listeners of the changed database only, until they unsubscribe', () => {
    const notifier = new ChangeNotifier();
    const woken: string[] = [];
    const stopA = notifier.subscribe('a', () => woken.push('a1'));
    notifier.subscribe('a', () => woken.push('a2'));
    notifier.subscribe('b', () => woken.push('b'));
    notifier.changed('a');
    assert.deepEqual(woken, ['a1', 'a2']);
    stopA();
    notifier.changedElsewhere('a');
    assert.deepEqual(woken, ['a1', 'a2', 'a2']);
    assert.equal(notifier.listenerCount, 2);
  });

  it('publishes local changes once per event-loop turn, never changes from elsewhere', async () => {
    const notifier = new ChangeNotifier();
    const published: string[][] = [];
    notifier.connect((dbs) => published.push(dbs));
    notifier.changed('a');
    notifier.changed('b');
    notifier.changed('a');
    notifier.changedElsewhere('c');
    assert.deepEqual(published, []);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(published, [['a', 'b']]);
  });

  it('a throwing listener does not stop the others', () => {
    const notifier = new ChangeNotifier();
    let reached = false;
    notifier.subscribe('a', () => {
      throw new Error('boom');
    });
    notifier.subscribe('a', () => (reached = true));
    notifier.changed('a');
    assert.equal(reached, true);
  });

  it('close() tells every feed once, and late subscribers at once', async () => {
    const notifier = new ChangeNotifier();
    let closed = 0;
    notifier.onClose(() => closed++);
    const stop = notifier.onClose(() => closed++);
    stop();
    notifier.close();
    notifier.close();
    assert.equal(closed, 1);
    assert.equal(notifier.closed, true);
    await new Promise<void>((resolve) => notifier.onClose(resolve));
  });
});
