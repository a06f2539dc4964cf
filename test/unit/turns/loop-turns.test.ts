import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  it('a loop that starts while others wait for a turn gives its own after a quarter slice once the event loop has run a slice', async () => {
    // Far beyond the clocks of the other tests, whose resumed loops set the shared clock.
    let now = 1e9;
    const waiting = new LoopTurns(8, () => now);
    now += 8;
    const waited = waiting.maybeYield();
    const started = new LoopTurns(8, () => now);
    now += 1;
    await started.maybeYield();
    assert.equal(started.yields, 0, 'under a quarter slice of its own: no turn');
    now += 1;
    const gave = started.maybeYield();
    assert.equal(started.yields, 1, 'a quarter slice of its own, and the event loop ran a slice since the last loop resumed');
    await Promise.all([waited, gave]);
    const alone = new LoopTurns(8, () => now);
    now += 7;
    await alone.maybeYield();
    assert.equal(alone.yields, 0, 'with nobody waiting a loop runs its whole slice');
  });

  it('a light HTTP request is answered between two turns of heavy requests that run on the same event loop', async () => {
    const heavy = { running: 0, finished: 0, turnsAtLight: [] as number[] };
    const loops: LoopTurns[] = [];
    let lightAnswered = false;
    const server = createServer(async (req, res) => {
      if (req.url === '/light') {
        heavy.turnsAtLight.push(...loops.map((turns) => turns.yields));
        res.end('light');
        return;
      }
      const turns = LoopTurns.until(undefined);
      loops.push(turns);
      heavy.running++;
      // Synchronous work, as a scan's: it only lets the light request in at its turns. It runs
      // until the light answer reached its client and three more turns, at most 100 000 turns.
      let after = -1;
      while (turns.yields < 100_000 && (after < 0 || turns.yields < after + 3)) {
        await turns.maybeYield();
        if (lightAnswered && after < 0) after = turns.yields;
        spinFor(0.2);
      }
      heavy.running--;
      heavy.finished++;
      res.end('heavy');
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as AddressInfo;
    try {
      const heavies = [get(port, '/heavy'), get(port, '/heavy')];
      while (loops.length < 2 || loops.some((turns) => turns.yields < 2)) await new Promise((turn) => setImmediate(turn));
      assert.equal(await get(port, '/light'), 'light');
      lightAnswered = true;
      assert.equal(heavy.running, 2, 'both heavy requests were still running when the light one was answered');
      assert.deepEqual(await Promise.all(heavies), ['heavy', 'heavy']);
      assert.equal(heavy.finished, 2);
      for (const turns of heavy.turnsAtLight) assert.ok(turns >= 2, `each heavy request had taken turns before the light answer: ${heavy.turnsAtLight.join(', ')}`);
      for (const turns of loops) assert.ok(turns.yields < 100_000, 'the heavy requests went on after the light answer and stopped once it arrived');
    } finally {
      server.close();
    }
  });
});

/** Holds the event loop for `ms`, as a synchronous storage call does. */
function spinFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}
