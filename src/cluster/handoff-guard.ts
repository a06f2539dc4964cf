import type { Worker } from 'node:cluster';

/** A connection handle as node:cluster's primary holds it (a libuv TCP handle). */
interface ConnectionHandle {
  close(): void;
}

interface ClusterInternal {
  cmd?: unknown;
  act?: unknown;
  seq?: unknown;
  ack?: unknown;
}

const asInternal = (value: unknown): ClusterInternal | undefined =>
  typeof value === 'object' && value !== null && (value as ClusterInternal).cmd === 'NODE_CLUSTER' ? (value as ClusterInternal) : undefined;

const isHandle = (value: unknown): value is ConnectionHandle => typeof value === 'object' && value !== null && typeof (value as ConnectionHandle).close === 'function';

/**
 * Closes the connections handed to `worker` that it never took, once it has exited.
 *
 * node:cluster's round-robin primary accepts every connection and sends its handle to a worker
 * (`newconn`); it closes its own copy only when that worker answers (`ack`), see Node's
 * lib/internal/cluster/round_robin_handle.js. A worker that dies (or is stopped, then killed)
 * before it answers never does, so the primary kept the connection open for ever and its client
 * waited for an answer that could not come. Closing it lets the client see the connection end at
 * once, as it does for the requests a dying worker was answering.
 *
 * Not retried on another worker: node:cluster offers no way to hand a connection over again.
 * Such a connection was never read (a worker acknowledges a handle before it reads from it), so a
 * client may safely send the request again.
 *
 * This reads two shapes of node:cluster's internal messages (`newconn` with its `seq`, the `ack`
 * that answers it): test/integration/workers-handoff.test.ts fails if Node ever changes them.
 */
export function closeUntakenConnections(worker: Worker): void {
  const child = worker.process;
  const untaken = new Map<unknown, ConnectionHandle>();
  const send = child.send.bind(child) as (...args: unknown[]) => boolean;
  child.send = ((...args: unknown[]): boolean => {
    const message = asInternal(args[0]);
    if (message?.act === 'newconn' && isHandle(args[1])) untaken.set(message.seq, args[1]);
    return send(...args);
  }) as typeof child.send;
  child.on('internalMessage', (value: unknown) => {
    const message = asInternal(value);
    if (message?.ack !== undefined) untaken.delete(message.ack);
  });
  worker.once('exit', () => {
    for (const handle of untaken.values()) handle.close();
    untaken.clear();
  });
}
