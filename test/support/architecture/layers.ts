import { edgeName, type FolderGraph } from './folders.js';

/**
 * The layer table of docs/architecture.md ("The layers": layer | folder | job), read as the rule
 * the sources obey: imports point down the rows or stay within one row.
 */

export interface LayerRow {
  layer: string;
  /** Nodes of the folder graph named in the row's folder column: `src/http/routes`, `src/app.ts`. */
  folders: string[];
  /** Markdown pages the row links to (`views.md`, `operations.md` from `operations.md#metrics`). */
  pages: string[];
}

const cells = (line: string): string[] => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());

/** The rows of the table under `## The layers`, in order; throws when the section or its table is missing. */
export function layerTable(markdown: string): LayerRow[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('The layers\n'));
  if (!section) throw new Error('docs/architecture.md has no "## The layers" section');
  const lines = section.split('\n').filter((line) => line.trim().startsWith('|'));
  const [header, separator, ...rows] = lines;
  if (!header || !/^\|?\s*layer\s*\|\s*folder\s*\|\s*job\s*\|?$/.test(header.trim()) || !separator?.includes('---')) {
    throw new Error('the layers table of docs/architecture.md must start with the header | layer | folder | job |');
  }
  return rows.map((line) => {
    const [layer, folder, job] = cells(line);
    const folders = [...folder.matchAll(/`(src\/[^`]*)`/g)].map((match) => match[1].replace(/\/$/, ''));
    const pages = [...`${folder} ${job}`.matchAll(/\]\(([^)#]+\.md)(#[^)]*)?\)/g)].map((match) => match[1]);
    return { layer, folders, pages };
  });
}

/** Which row names each node; a node named by several rows appears once per row in `duplicates`. */
function rowIndex(rows: LayerRow[]): { rowOf: Map<string, number>; duplicates: string[] } {
  const rowOf = new Map<string, number>();
  const duplicates: string[] = [];
  rows.forEach((row, index) => {
    for (const folder of row.folders) {
      if (rowOf.has(folder)) duplicates.push(`${folder} is named by the rows "${rows[rowOf.get(folder)!].layer}" and "${row.layer}"`);
      else rowOf.set(folder, index);
    }
  });
  return { rowOf, duplicates };
}

/**
 * Mismatches between the table and the tree: every node (each folder under src/, each file directly
 * in src/) in exactly one row, every named folder present.
 */
export function tableMismatches(rows: LayerRow[], nodes: string[]): string[] {
  const { rowOf, duplicates } = rowIndex(rows);
  const present = new Set(nodes);
  const unlisted = nodes.filter((node) => !rowOf.has(node)).map((node) => `${node} is in no row of the layers table`);
  const missing = [...rowOf.keys()].filter((folder) => !present.has(folder)).map((folder) => `${folder} is named by the row "${rows[rowOf.get(folder)!].layer}" but does not exist`);
  return [...duplicates, ...unlisted, ...missing];
}

/**
 * Imports that point up the table, one line per file import, e.g.
 * `src/views/views.ts -> src/http/event-loop.ts: views (row 9) imports HTTP (row 7)`.
 * Edges named in `allowed` (`'a -> b'`) are skipped; nodes in no row are left to `tableMismatches`.
 */
export function upwardImports(rows: LayerRow[], graph: FolderGraph, allowed: Iterable<string> = []): string[] {
  const { rowOf } = rowIndex(rows);
  const skip = new Set(allowed);
  const found: string[] = [];
  for (const edges of graph.values()) {
    for (const edge of edges.values()) {
      const from = rowOf.get(edge.from);
      const to = rowOf.get(edge.to);
      if (from === undefined || to === undefined || to >= from || skip.has(edgeName(edge))) continue;
      const why = `${rows[from].layer} (row ${from + 1}) imports ${rows[to].layer} (row ${to + 1})`;
      found.push(...edge.imports.map((line) => `${line}: ${why}`));
    }
  }
  return found.sort();
}

/** Folder edges that point up the table (for allow-lists: which entries are still needed). */
export function upwardEdges(rows: LayerRow[], graph: FolderGraph): string[] {
  const { rowOf } = rowIndex(rows);
  return [...graph.values()].flatMap((edges) => [...edges.values()]).filter((edge) => (rowOf.get(edge.to) ?? Infinity) < (rowOf.get(edge.from) ?? -Infinity)).map(edgeName).sort();
}
