import { isObject, type DesignFunctionType, type NamedFunction } from './function-type.js';
import type { JsonObject } from '../../json/json.js';

/**
 * `nouveau.{name}.index`: Nouveau full-text index functions, which call `index(type, name, value,
 * options)` (src/js/prelude-index.ts) and run in src/search, where a failing call leaves its
 * document out of the index.
 */
export const nouveau = {
  member: 'nouveau',
  functionsIn: (ddoc) => {
    const found: NamedFunction[] = [];
    const all = ddoc['nouveau'];
    if (!isObject(all)) return found;
    for (const [name, index] of Object.entries(all)) {
      if (isObject(index) && typeof index['index'] === 'string') found.push({ path: ['nouveau', name, 'index'], prefix: `Compilation of the index function in the '${name}' index failed: ` });
    }
    return found;
  },
} satisfies DesignFunctionType;

/**
 * The analyzers CouchDB's Nouveau documents (`ddocs/nouveau.rst`); docs/search.md says how each is
 * approximated. `portugese` is how CouchDB 3.5 itself spells it, so its design documents keep working.
 */
const NOUVEAU_ANALYZERS: readonly string[] = [
  'arabic', 'armenian', 'basque', 'bulgarian', 'catalan', 'chinese', 'cjk', 'classic', 'czech', 'danish', 'dutch', 'email',
  'english', 'finnish', 'french', 'galician', 'german', 'hindi', 'hungarian', 'indonesian', 'irish', 'italian', 'japanese',
  'keyword', 'latvian', 'norwegian', 'persian', 'polish', 'portugese', 'portuguese', 'romanian', 'russian', 'simple', 'simple_asciifolding',
  'spanish', 'standard', 'swedish', 'thai', 'turkish', 'whitespace',
];

/** A name `_nouveau_analyze` and design documents accept. */
export function isNouveauAnalyzer(name: string): boolean {
  return NOUVEAU_ANALYZERS.includes(name);
}

function analyzerProblem(where: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return `${where} must be a string`;
  return isNouveauAnalyzer(value) ? undefined : `${where}: unknown analyzer ${JSON.stringify(value)}`;
}

function indexProblem(name: string, index: unknown, query: boolean): string | undefined {
  if (!isObject(index) || index['index'] === undefined) return `index \`${name}\` must have parameter \`index\``;
  // A `language: "query"` design document's index is a Mango definition (src/mango/nouveau-index.ts), not a function.
  if (query) return isObject(index['index']) ? undefined : `index \`${name}\`: \`index\` must be an object`;
  if (typeof index['index'] !== 'string') return `index \`${name}\`: \`index\` must be a string`;
  if (index['default_analyzer'] !== undefined) {
    const problem = analyzerProblem(`index \`${name}\`: default_analyzer`, index['default_analyzer']);
    if (problem !== undefined) return problem;
  }
  const fields = index['field_analyzers'];
  if (fields === undefined) return undefined;
  if (!isObject(fields)) return `index \`${name}\`: field_analyzers must be an object`;
  for (const [field, analyzer] of Object.entries(fields)) {
    const problem = analyzerProblem(`index \`${name}\`: field_analyzers.${field}`, analyzer);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Why the design document's `nouveau` member cannot define indexes (400 `invalid_design_doc` on
 * save), or undefined. CouchDB skips such an index silently and answers 400 when it is queried;
 * Divan refuses it on save, so the mistake shows where it is made.
 */
export function nouveauProblem(ddoc: JsonObject): string | undefined {
  const all = ddoc['nouveau'];
  if (all === undefined) return undefined;
  if (!isObject(all)) return '`nouveau` must be an object';
  for (const [name, index] of Object.entries(all)) {
    const problem = indexProblem(name, index, ddoc['language'] === 'query');
    if (problem !== undefined) return problem;
  }
  return undefined;
}
