/**
 * Messages between the nodes that share one store: which users changed, which passwords failed
 * (for lockout), that a shared secret appeared. A node receives its own messages too; `from` lets
 * it skip them. Delivery is best effort and ordered per sender; nothing durable travels here.
 */
export interface BusMessage {
  topic: string;
  payload: string;
  from: string;
}

export interface ClusterBus {
  readonly nodeId: string;
  publish(topic: string, payload: string): Promise<void>;
  subscribe(listener: (message: BusMessage) => void): () => void;
  close(): Promise<void>;
}
