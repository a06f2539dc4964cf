import { dirname } from 'node:path';
import type { ModuleFacts } from './modules.js';

/**
 * The folder graph of `src/`: each folder is a node (a sub-folder is a node of its own), and a file
 * directly in `src/` (`src/app.ts`, `src/main.ts`) is a node by itself, as the layer table lists them.
 */

/** `src/http/routes/session.ts` -> `src/http/routes`; `src/app.ts` -> `src/app.ts`. */
export function nodeOf(path: string, root = 'src'): string {
  const folder = dirname(path);
  return folder === root ? path : folder;
}

/** One folder edge and the file imports that make it, e.g. `src/http/router.ts -> src/http/routes/config.ts`. */
export interface FolderEdge {
  from: string;
  to: string;
  imports: string[];
}

export type FolderGraph = Map<string, Map<string, FolderEdge>>;

export const edgeName = (edge: { from: string; to: string }): string => `${edge.from} -> ${edge.to}`;

/** The folder graph of the modules under `root` (imports of files outside `root` are left out). */
export function folderGraph(modules: Map<string, ModuleFacts>, root = 'src'): FolderGraph {
  const graph: FolderGraph = new Map();
  const inside = (path: string): boolean => path.startsWith(`${root}/`) && modules.has(path);
  for (const module of modules.values()) {
    if (!inside(module.path)) continue;
    const from = nodeOf(module.path, root);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const { target } of module.imports) {
      const to = nodeOf(target, root);
      if (!inside(target) || to === from) continue;
      const edges = graph.get(from)!;
      if (!edges.has(to)) edges.set(to, { from, to, imports: [] });
      edges.get(to)!.imports.push(`${module.path} -> ${target}`);
    }
  }
  return graph;
}

/** The graph without the given edges (`'a -> b'`). */
export function withoutEdges(graph: FolderGraph, removed: Iterable<string>): FolderGraph {
  const drop = new Set(removed);
  return new Map([...graph].map(([from, edges]) => [from, new Map([...edges].filter(([, edge]) => !drop.has(edgeName(edge))))]));
}

/** Strongly connected components of more than one node (Tarjan), each sorted; `next` gives a node's successors. */
export function stronglyConnected(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indices = new Map<string, number>();
  const lowlinks = new Map<string, number>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    lowlinks.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const successor of next(node)) {
      if (!indices.has(successor)) {
        visit(successor);
        lowlinks.set(node, Math.min(lowlinks.get(node)!, lowlinks.get(successor)!));
      } else if (onStack.has(successor)) {
        lowlinks.set(node, Math.min(lowlinks.get(node)!, indices.get(successor)!));
      }
    }
    if (lowlinks.get(node) !== indices.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...nodes].sort()) if (!indices.has(node)) visit(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The strongly connected components of the folder graph: each folder cycle lies inside one. */
export const folderComponents = (graph: FolderGraph): string[][] => stronglyConnected(graph.keys(), (node) => graph.get(node)?.keys() ?? []);

/** A shortest cycle through `start` inside `component`, as the nodes walked: `[a, b, a]`. */
export function cycleThrough(graph: FolderGraph, component: string[], start: string): string[] {
  const members = new Set(component);
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!members.has(next) || previous.has(next)) continue;
      previous.set(next, node);
      if (next === start) {
        const path = [start];
        for (let at = previous.get(start)!; at !== start; at = previous.get(at)!) path.unshift(at);
        return [start, ...path];
      }
      queue.push(next);
    }
  }
  return [start];
}

/**
 * One readable line per folder cycle: the cycle as a path, then the first file import of each step,
 * e.g. `src/a -> src/b -> src/a (src/a/x.ts -> src/b/y.ts; src/b/y.ts -> src/a/z.ts)`.
 */
export function folderCycles(graph: FolderGraph): string[] {
  return folderComponents(graph).map((component) => {
    const path = cycleThrough(graph, component, component[0]);
    const steps = path.slice(1).map((to, step) => graph.get(path[step])!.get(to)!.imports[0]);
    const rest = component.filter((node) => !path.includes(node));
    const also = rest.length > 0 ? `; the same cycle also passes through ${rest.join(', ')}` : '';
    return `${path.join(' -> ')} (${steps.join('; ')}${also})`;
  });
}
