import type { HistogramValue } from './sample-window.js';

/** One statistic of `GET /_node/_local/_stats`: where it sits in the tree and what it holds. */
export interface TreeEntry {
  path: string[];
  type: 'counter' | 'gauge' | 'histogram';
  desc: string;
  value: number | HistogramValue;
}

type Tree = { [key: string]: Tree | { value: number | HistogramValue; type: string; desc: string } };

/** CouchDB's nesting: `{"couchdb":{"httpd":{"requests":{"value":N,"type":"counter","desc":"…"}}}}`. */
export function statsTree(entries: readonly TreeEntry[]): Tree {
  const root: Tree = {};
  for (const entry of entries) {
    let node = root;
    for (const key of entry.path.slice(0, -1)) {
      node[key] ??= {};
      node = node[key] as Tree;
    }
    node[entry.path[entry.path.length - 1]!] = { value: entry.value, type: entry.type, desc: entry.desc };
  }
  return root;
}

/**
 * The part of the tree below `path` (`/_node/_local/_stats/couchdb/request_time`); undefined when
 * the path leads nowhere (CouchDB then answers `null`).
 */
export function subtree(tree: unknown, path: readonly string[]): unknown {
  let node = tree;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
