/**
 * The other nodes of a cluster, as `/_membership` lists them and `/_node/{name}/…` reaches them.
 * A single server (SQLite) has none: it answers for itself only.
 */

/** A read-only `/_node/_local/…` request asked of another node: the path after the node's name. */
export interface NodeQuestion {
  path: string[];
}

/** The asked node's answer, as it would have sent it (the body as text: JSON or a Prometheus scrape). */
export interface NodeAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface NodePeers {
  /** The names of the nodes alive now, this one included, sorted. */
  names(): Promise<string[]>;
  /** `node`'s answer, or undefined when it did not answer in time (it is down). */
  ask(node: string, question: NodeQuestion): Promise<NodeAnswer | undefined>;
}
