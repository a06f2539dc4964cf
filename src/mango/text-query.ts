/**
 * A selector as the Lucene query a nouveau Mango index answers (CouchDB's `mango_selector_text`):
 * each condition becomes a clause on the field the index names after the value's path and type
 * (`age:number` → `age_3anumber`, see nouveau-fields.ts), `$text` a phrase on `$default`, and
 * conditions the index cannot answer (`$regex`, `$type`, ranges over arrays or objects) become "the
 * field exists" clauses on `$fieldnames`. The query finds at least every matching document; the
 * cursor matches each against the whole selector afterwards.
 *
 * Differences from CouchDB's text, none changing which documents match: string values are always
 * escaped inside their quotes, a negative number is written `\-5` (Lucene reads `-5` after a field
 * as a prohibition), and a string range's open end is `*`.
 */
import { isObject } from '../documents/document-json.js';
import { fieldPath } from '../documents/selector-match.js';
import { invalidTextOperator } from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';

type TextNode =
  | { op: 'and' | 'or'; args: TextNode[] }
  /** Documents where `exists` holds and `arg` does not; `arg` false: where the field does not exist. */
  | { op: 'not'; exists: TextNode; arg: TextNode | false }
  | { op: 'field'; path: string[]; name: string; value: string; length?: true }
  | { op: 'null'; name: string; value: string }
  | { op: 'fieldname'; name: string; wildcard: string }
  | { op: 'regex'; path: string }
  | { op: 'default'; value: string };

const ARRAY = '[]';

/** mango_util:lucene_escape_field: letters and digits kept, every other UTF-8 byte as `_hh`. */
export function escapeFieldPart(part: string): string {
  let escaped = '';
  for (const byte of Buffer.from(part, 'utf8')) {
    const c = String.fromCharCode(byte);
    escaped += /[A-Za-z0-9]/.test(c) ? c : `_${byte.toString(16).padStart(2, '0')}`;
  }
  return escaped;
}

/** mango_util:lucene_escape_user: a dotted name, each part escaped. */
export function escapeFieldName(name: string): string {
  return fieldPath(name).map(escapeFieldPart).join('.');
}

/** mango_util:lucene_escape_query_value: Lucene's special characters and whitespace behind `\`. */
function escapeQueryValue(value: string): string {
  return value.replace(/&&|\|\||[+\-(){}[\]!^~*?:/\\" \t\r\n]/g, (special) => `\\${special}`);
}

/** Erlang's float_to_list: `1.50000000000000000000e+00`. */
function erlangFloat(value: number): string {
  return value.toExponential(20).replace(/e([+-])(\d)$/, 'e$10$2');
}

function valueText(value: Json): string {
  if (typeof value === 'string') return `"${escapeQueryValue(value)}"`;
  if (typeof value === 'number') {
    const text = Number.isInteger(value) ? String(value) : erlangFloat(value);
    return text.startsWith('-') ? `\\${text}` : text;
  }
  return value === false ? 'false' : 'true';
}

function typeOf(value: Json): string {
  return typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : typeof value === 'string' ? 'string' : 'null';
}

const pathText = (path: readonly string[]): string => path.filter((part) => part !== '').join('.');
const isScalar = (value: Json): boolean => value === null || typeof value !== 'object';

function field(path: string[], value: Json, text = valueText(value)): TextNode {
  return { op: 'field', path, name: `${pathText(path)}:${typeOf(value)}`, value: text };
}

/** The field exists, as any type (`age:*`) or as an object or array (`age.*`). */
function exists(path: string[]): TextNode {
  return { op: 'or', args: [{ op: 'fieldname', name: `${pathText(path)}:`, wildcard: '*' }, { op: 'fieldname', name: pathText(path), wildcard: '.*' }] };
}

function range(path: string[], operator: string, value: Json): TextNode {
  if (!isScalar(value) || value === null) return exists(path);
  const open = typeof value === 'number' ? '*' : undefined;
  const text = valueText(value);
  if (operator === '$lt') return field(path, value, `[${open ?? '""'} TO ${text}}`);
  if (operator === '$lte') return field(path, value, `[${open ?? '""'} TO ${text}]`);
  if (operator === '$gte') return field(path, value, `[${text} TO *]`);
  return field(path, value, `{${text} TO *]`);
}

function equals(path: string[], value: Json): TextNode {
  if (value === null) return { op: 'null', name: `${pathText(path)}:null`, value: 'true' };
  if (Array.isArray(value)) {
    const inArray = [...path, ARRAY];
    const length: TextNode = { op: 'field', path: inArray, name: `${pathText(inArray)}:length`, value: valueText(value.length), length: true };
    return { op: 'and', args: [length, ...value.map((item) => equals(inArray, item))] };
  }
  if (isObject(value)) return Object.keys(value).length === 0 ? exists(path) : convert(path, value);
  return field(path, value);
}

/** `$in`: each value as the field itself or as an element of it. */
function anyOf(path: string[], values: Json[]): TextNode[] {
  const inArray = [...path, ARRAY];
  return values.map((value) => {
    if (isObject(value)) return { op: 'or', args: Object.entries(value).map(([key, sub]) => ({ op: 'or', args: [convert(path, { [key]: sub }), convert(inArray, { [key]: sub })] }) as TextNode) };
    if (Array.isArray(value)) return exists(path);
    return { op: 'or', args: [field(path, value), field(inArray, value)] };
  });
}

function condition(path: string[], operator: string, argument: Json): TextNode {
  switch (operator) {
    case '$and':
    case '$or':
      return { op: operator === '$and' ? 'and' : 'or', args: (argument as Json[]).map((item) => convert(path, item)) };
    case '$not':
      return { op: 'not', exists: exists(path), arg: convert(path, argument) };
    case '$default': {
      const inner = convert(path, argument);
      if (inner.op !== 'field') throw invalidTextOperator('$text');
      return { op: 'default', value: inner.value };
    }
    case '$text':
      if (typeof argument !== 'string') throw invalidTextOperator('$text');
      return field(path, argument);
    case '$all': {
      const values = argument as Json[];
      if (values.length === 1 && Array.isArray(values[0])) return { op: 'or', args: [equals(path, values[0]), equals([...path, ARRAY], values[0])] };
      return { op: 'and', args: values.map((item) => convert([...path, ARRAY], item)) };
    }
    case '$elemMatch':
    case '$allMatch':
      return convert([...path, ARRAY], argument);
    case '$lt':
    case '$lte':
    case '$gt':
    case '$gte':
      return range(path, operator, argument);
    case '$eq':
      return equals(path, argument);
    case '$ne':
      return { op: 'not', exists: exists(path), arg: equals(path, argument) };
    case '$in':
      return { op: 'or', args: anyOf(path, argument as Json[]) };
    case '$nin':
      return { op: 'not', exists: exists(path), arg: { op: 'or', args: anyOf(path, argument as Json[]) } };
    case '$exists':
      return argument === true ? exists(path) : { op: 'not', exists: exists(path), arg: false };
    case '$beginsWith':
      return field(path, argument, `${escapeQueryValue(String(argument))}*`);
    case '$type':
      return exists(path);
    case '$mod':
      return { op: 'fieldname', name: `${pathText(path)}:`, wildcard: 'number' };
    case '$regex':
      return { op: 'regex', path: pathText(path) };
    case '$size':
      return { op: 'field', path: [...path, ARRAY], name: `${pathText([...path, ARRAY])}:length`, value: valueText(argument), length: true };
    default:
      throw invalidTextOperator(operator);
  }
}

/** A named field: its dotted parts, array positions (`a.1`) searched both as named and as any element. */
function named(path: string[], key: string, cond: Json): TextNode {
  // Dots inside a part stay escaped so that escapeFieldName splits the name where the selector did.
  const parts = key === '' ? [] : fieldPath(key).map((part) => part.replaceAll('.', '\\.'));
  const positions = parts.map((part) => (/^[+-]?\d+$/.test(part) ? ARRAY : part));
  if (positions.every((part, i) => part === parts[i])) return convert([...path, ...parts], cond);
  return { op: 'or', args: [convert([...path, ...parts], cond), convert([...path, ...positions], cond)] };
}

function convert(path: string[], selector: Json): TextNode {
  if (!isObject(selector)) return Array.isArray(selector) ? exists(path) : equals(path, selector);
  const entries = Object.entries(selector);
  if (entries.length === 0) return exists(path);
  if (entries.length > 1) return { op: 'and', args: entries.map(([key, value]) => convert(path, { [key]: value })) };
  const [key, value] = entries[0]!;
  return key.startsWith('$') ? condition(path, key, value) : named(path, key, value);
}

function nested(args: readonly TextNode[], joiner: string): string {
  const parts = args.map(queryText).filter((part) => part !== '');
  return parts.length === 0 ? '' : `(${parts.join(joiner)})`;
}

function queryText(node: TextNode): string {
  switch (node.op) {
    case 'and':
      return nested(node.args, ' AND ');
    case 'or':
      return nested(node.args, ' OR ');
    case 'not': {
      if (node.arg === false) return `($fieldnames:/.*/  AND NOT (${queryText(node.exists)}))`;
      const negated = queryText(node.arg);
      return negated === '' ? `(${queryText(node.exists)})` : `(${queryText(node.exists)} AND NOT (${negated}))`;
    }
    case 'field':
    case 'null':
      return `(${escapeFieldName(node.name)}:${node.value})`;
    case 'fieldname':
      return `($fieldnames:${escapeFieldName(node.name)}${node.wildcard})`;
    case 'regex':
      return `($fieldnames:${escapeFieldName(`${node.path}:`)}string)`;
    case 'default':
      return `($default:${node.value})`;
  }
}

/** The Lucene query of a selector in normal form (normal-form.ts); `''` when it asks for nothing. */
export function textQuery(selector: JsonObject): string {
  return queryText(convert([], selector));
}

function indexable(fields: string[], node: TextNode): string[] {
  switch (node.op) {
    case 'and':
      return node.args.reduce(indexable, fields);
    case 'or': {
      // A condition on `a.1` also searches any element of `a` (`a.[]`): the index defines one of the two.
      const [first, second] = node.args;
      if (node.args.length === 2 && first!.op === 'field' && second!.op === 'field' && second.path.includes(ARRAY)) return indexable(fields, first!);
      return node.args.reduce(indexable, fields);
    }
    case 'not':
      // `$exists: false` can be answered by no field list: CouchDB forgets every field found so far.
      return node.arg === false ? [] : indexable(indexable(fields, node.exists), node.arg);
    case 'field':
      return node.length === true ? fields : [...fields, node.name];
    case 'regex':
      return [...fields, `${node.path}:string`];
    case 'default':
      return [...fields, '$default'];
    default:
      return fields;
  }
}

/** mango_idx_nouveau:indexable_fields: the `name:type` columns an index needs for this selector (normal form). */
export function textIndexableFields(selector: JsonObject): string[] {
  if (Object.keys(selector).length === 0) return [];
  return [...new Set(indexable([], convert([], selector)))];
}
