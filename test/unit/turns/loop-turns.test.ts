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

  it('issue 32 item 3: once the request signal aborted (the client left), the next turn stops the loop with 499 client_closed_request', async () => {
    const controller = new AbortController();
    const turns = LoopTurns.until(controller.signal);
    await turns.maybeYield();
    controller.abort();
    await assert.rejects(turns.maybeYield(), { status: 499, error: 'client_closed_request' });
  });
});
