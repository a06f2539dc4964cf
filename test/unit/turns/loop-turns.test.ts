import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoopTurns } from '../../../src/turns/loop-turns.js';

describe('LoopTurns', () => {
  it('gives the event loop a turn once its slice is used up, and only then', async () => {
    let now = 0;
    const turns = new LoopTurns(10, () => now);
    let ranBetween = false;
    setImmediate(() => (ranBetween = true));
    now = 9;
    await turns.maybeYield();
    assert.equal(turns.yields, 0);
    assert.equal(ranBetween, false, 'no turn before the slice ends');
    now = 10;
    await turns.maybeYield();
    assert.equal(turns.yields, 1);
    assert.equal(ranBetween, true, 'the pending setImmediate ran during the turn');
    now = 19;
    await turns.maybeYield();
    assert.equal(turns.yields, 1, 'a new slice starts after each turn');
  });

  it('issue 33 item 3: loops whose slices ended resume one per event-loop turn, so I/O callbacks run between any two slices', async () => {
    let now = 0;
    const loops = [new LoopTurns(10, () => now), new LoopTurns(10, () => now), new LoopTurns(10, () => now)];
    now = 10;
    const order: string[] = [];
    // Each loop, once resumed, records itself; an immediate re-armed from itself runs once per event-loop turn and records the turns.
    let ticking = true;
    const tick = (): void => {
      order.push('turn');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await Promise.all(loops.map(async (turns, i) => {
      await turns.maybeYield();
      order.push(`loop ${i}`);
    }));
    ticking = false;
    const resumed = order.filter((entry) => entry.startsWith('loop'));
    assert.deepEqual(resumed, ['loop 0', 'loop 1', 'loop 2'], 'first come, first served');
    for (let i = 1; i < resumed.length; i++) {
      const between = order.slice(order.indexOf(resumed[i - 1]!) + 1, order.indexOf(resumed[i]!));
      assert.ok(between.includes('turn'), `an event-loop turn between ${resumed[i - 1]} and ${resumed[i]}: ${order.join(', ')}`);
    }
  });

  it('issue 32 item 3: once the request signal aborted (the client left), the next turn stops the loop with 499 client_closed_request', async () => {
    const controller = new AbortController();
    const turns = LoopTurns.until(controller.signal);
    await turns.maybeYield();
    controller.abort();
    await assert.rejects(turns.maybeYield(), { status: 499, error: 'client_closed_request' });
  });
});
