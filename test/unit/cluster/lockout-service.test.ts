import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { describe, test } from 'node:test';
import { asLockoutAnswer, asLockoutRequest, type LockoutAnswer, type LockoutRequest } from '../../../src/cluster/lockout-protocol.js';
import { LockoutService } from '../../../src/cluster/lockout-service.js';

/** Settles pending promise callbacks. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const SETTINGS = { threshold: 2, maxObjects: 100, maxLifetimeMs: 60_000 };

/** A worker as the service sees it: its id, whether its channel is open, and what it was sent. */
function fakeWorker(id: number): { worker: Worker; answers: LockoutAnswer[]; disconnect(): void } {
  const answers: LockoutAnswer[] = [];
  let connected = true;
  const worker = {
    id,
    isConnected: () => connected,
    send: (message: LockoutAnswer, done: (error: Error | null) => void) => {
      answers.push(message);
      done(null);
      return true;
    },
  } as unknown as Worker;
  return { worker, answers, disconnect: () => (connected = false) };
}

const admit = (attempt: number, known = 0): LockoutRequest => ({ divan: 'lockout-admit', attempt, peer: '192.0.2.1', name: 'victim', salt: 's', known, settings: SETTINGS });
const settle = (attempt: number, failed: boolean): LockoutRequest => ({ divan: 'lockout-settle', attempt, failed });

describe("the primary's lockout (issue 32 item 15): one for every worker of the node", () => {
  test('issue 32 item 15: threshold attempts are admitted over all workers together; the next waits, then meets the lock their failures made', async () => {
    const service = new LockoutService();
    const [one, two] = [fakeWorker(1), fakeWorker(2)];
    service.handle(one.worker, admit(1));
    service.handle(two.worker, admit(1));
    service.handle(two.worker, admit(2));
    await turn();
    assert.deepEqual([...one.answers, ...two.answers], [
      { divan: 'lockout-admitted', attempt: 1, locked: false },
      { divan: 'lockout-admitted', attempt: 1, locked: false },
    ], 'the third attempt waits: two in flight may still fail');
    service.handle(one.worker, settle(1, true));
    service.handle(two.worker, settle(1, true));
    await turn();
    assert.deepEqual(two.answers.at(-1), { divan: 'lockout-admitted', attempt: 2, locked: true });
  });

  test('issue 32 item 15: a worker that dies gives back the places of its attempts, without failures', async () => {
    const service = new LockoutService();
    const [dying, other] = [fakeWorker(1), fakeWorker(2)];
    service.handle(dying.worker, admit(1));
    service.handle(dying.worker, admit(2));
    service.handle(other.worker, admit(1));
    await turn();
    assert.deepEqual(other.answers, []);
    dying.disconnect();
    service.forget(dying.worker);
    await turn();
    assert.deepEqual(other.answers, [{ divan: 'lockout-admitted', attempt: 1, locked: false }]);
  });

  test("issue 32 item 15: failures the asking worker knows of (other nodes') count toward the lock", async () => {
    const service = new LockoutService();
    const worker = fakeWorker(1);
    service.handle(worker.worker, admit(1, 2));
    await turn();
    assert.deepEqual(worker.answers, [{ divan: 'lockout-admitted', attempt: 1, locked: true }]);
  });

  test('malformed lockout messages are dropped, never acted on', () => {
    assert.deepEqual(asLockoutRequest(admit(3)), admit(3));
    assert.deepEqual(asLockoutRequest(settle(3, false)), settle(3, false));
    for (const bad of [
      { ...admit(3), attempt: -1 },
      { ...admit(3), known: 1.5 },
      { ...admit(3), name: 7 },
      { ...admit(3), settings: { threshold: 2 } },
      { divan: 'lockout-settle', attempt: 3 },
      { divan: 'lockout-admit' },
      null,
    ]) {
      assert.equal(asLockoutRequest(bad), undefined, JSON.stringify(bad));
    }
    assert.deepEqual(asLockoutAnswer({ divan: 'lockout-admitted', attempt: 1, locked: false }), { divan: 'lockout-admitted', attempt: 1, locked: false });
    assert.equal(asLockoutAnswer({ divan: 'lockout-admitted', attempt: 1 }), undefined);
  });
});
