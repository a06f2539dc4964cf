// Mango requests from what a person typed: the selector, fields, sort and limit of `_find` and
// `_explain`, and the fields of a new index. Pure, so the page and the tests share it.
import { parseJson } from './format.js';

export const DEFAULT_SELECTOR = '{\n  "_id": { "$gt": null }\n}';

/**
 * @typedef {{ ok: true, value: any } | { ok: false, field: string, error: string }} Parsed
 */

/** @param {unknown} value */
function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A comma-separated list, each part trimmed, empty parts dropped (field names may hold spaces).
 *
 * @param {string} text
 */
export function commaList(text) {
  return text.split(',').map((part) => part.trim()).filter((part) => part !== '');
}

/**
 * A sort or an index's fields: a JSON array as Mango takes it, or "a, b desc" typed in words.
 *
 * @param {string} text
 * @param {string} name the form field, for the error
 * @returns {Parsed}
 */
export function parseSort(text, name) {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const parsed = parseJson(trimmed);
    if (!parsed.ok) return { ok: false, field: name, error: `The ${name} is not valid JSON: ${parsed.error}` };
    const valid = Array.isArray(parsed.value) && parsed.value.every((item) => typeof item === 'string' || (isObject(item) && Object.keys(item).length === 1));
    return valid ? { ok: true, value: parsed.value } : { ok: false, field: name, error: `The ${name} is a list of field names or of {"field": "asc" | "desc"}.` };
  }
  const items = [];
  for (const part of commaList(trimmed)) {
    const match = /^(.*?)(?:\s+(asc|desc))?$/i.exec(part);
    const fieldName = match?.[1]?.trim() ?? '';
    if (fieldName === '') return { ok: false, field: name, error: `The ${name} has an empty field name.` };
    items.push({ [fieldName]: (match?.[2] ?? 'asc').toLowerCase() });
  }
  return { ok: true, value: items };
}

/**
 * A count typed in a field: empty is "not given", otherwise a whole number ≥ 0.
 *
 * @param {string} text
 * @param {string} name
 * @returns {Parsed}
 */
export function parseCount(text, name) {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: undefined };
  if (!/^\d+$/.test(trimmed)) return { ok: false, field: name, error: `The ${name} is a whole number, 0 or more.` };
  return { ok: true, value: Number(trimmed) };
}

/**
 * A selector typed as JSON: an object.
 *
 * @param {string} text
 * @param {string} name
 * @returns {Parsed}
 */
export function parseSelector(text, name) {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, field: name, error: `The ${name} is not valid JSON: ${parsed.error}` };
  if (!isObject(parsed.value)) return { ok: false, field: name, error: `The ${name} is a JSON object, like { "type": "post" }.` };
  return { ok: true, value: parsed.value };
}

/**
 * The body of `POST /{db}/_find` (and `_explain`).
 *
 * @param {{ selector: string, fields: string, sort: string, limit: string }} input
 * @returns {Parsed}
 */
export function findRequest(input) {
  const selector = parseSelector(input.selector, 'selector');
  if (!selector.ok) return selector;
  const sort = parseSort(input.sort, 'sort');
  if (!sort.ok) return sort;
  const limit = parseCount(input.limit, 'limit');
  if (!limit.ok) return limit;
  /** @type {Record<string, unknown>} */
  const body = { selector: selector.value };
  const fields = commaList(input.fields);
  if (fields.length > 0) body.fields = fields;
  if (sort.value.length > 0) body.sort = sort.value;
  if (limit.value !== undefined) body.limit = limit.value;
  return { ok: true, value: body };
}

/**
 * The body of `POST /{db}/_index` for a JSON index.
 *
 * @param {{ fields: string, name: string, ddoc: string, partial: string }} input
 * @returns {Parsed}
 */
export function indexRequest(input) {
  const fields = parseSort(input.fields, 'index fields');
  if (!fields.ok) return fields;
  if (fields.value.length === 0) return { ok: false, field: 'index fields', error: 'Name at least one field to index.' };
  /** @type {Record<string, unknown>} */
  const index = { fields: fields.value };
  if (input.partial.trim() !== '') {
    const partial = parseSelector(input.partial, 'partial filter selector');
    if (!partial.ok) return partial;
    index.partial_filter_selector = partial.value;
  }
  /** @type {Record<string, unknown>} */
  const body = { index, type: 'json' };
  if (input.name.trim() !== '') body.name = input.name.trim();
  if (input.ddoc.trim() !== '') body.ddoc = input.ddoc.trim().replace(/^_design\//, '');
  return { ok: true, value: body };
}
