import type { Services } from './services.js';

/** The names of the live nodes, this one included, sorted: `/_membership`'s lists and `_shards`' holders. */
export async function clusterNodeNames(services: Services): Promise<string[]> {
  const nodes = services.peers ? await services.peers.names() : [];
  if (!nodes.includes(services.nodeName())) nodes.push(services.nodeName());
  return nodes.sort();
}
