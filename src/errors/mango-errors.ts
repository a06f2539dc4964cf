import { CouchError } from './couch-error.js';

/**
 * Mango's answers (CouchDB's `mango_error`), with its statuses, error names and reasons. Where
 * CouchDB prints an Erlang term (`~w`), Divan prints the JSON the client sent.
 */
const shown = (value: unknown): string => JSON.stringify(value) ?? 'undefined';
const mango = (status: number, error: string, reason: string): CouchError => new CouchError(status, error, reason);

export const missingRequiredKey = (key: string): CouchError => mango(400, 'missing_required_key', `Missing required key: ${key}`);
export const invalidKey = (key: string): CouchError => mango(400, 'invalid_key', `Invalid key ${key} for this request.`);
export const invalidSelectorJson = (value: unknown): CouchError => mango(400, 'invalid_selector_json', `Selector must be a JSON object, not: ${shown(value)}`);
export const invalidOperator = (operator: string): CouchError => mango(400, 'invalid_operator', `Invalid operator: ${operator}`);
export const badArgument = (operator: string, detail: string): CouchError => mango(400, 'bad_arg', `Bad argument for operator ${operator}: ${detail}`);
export const notInteger = (value: unknown): CouchError => mango(400, 'invalid_non_neg_integer', `${shown(value)} is not an integer greater than or equal to zero`);
export const notPositiveInteger = (value: unknown): CouchError => mango(400, 'invalid_pos_integer', `${shown(value)} is not an integer greater than zero`);
export const invalidBoolean = (value: unknown): CouchError => mango(400, 'invalid_boolean', `Invalid boolean value: ${shown(value)}`);
export const invalidValue = (name: string, value: unknown): CouchError => mango(400, 'invalid_value', `Invalid value for ${name}: ${shown(value)}`);
export const invalidFields = (value: unknown): CouchError => mango(400, 'invalid_fields', `Fields must be an array of strings, not: ${shown(value)}`);
export const invalidSortJson = (value: unknown): CouchError => mango(400, 'invalid_sort_json', `Sort must be an array of sort specs, not: ${shown(value)}`);
export const invalidSortDirection = (value: unknown): CouchError => mango(400, 'invalid_sort_dir', `Invalid sort direction: ${shown(value)}`);
export const invalidSortField = (value: unknown): CouchError => mango(400, 'invalid_sort_field', `Invalid sort field: ${shown(value)}`);
export const mixedSort = (): CouchError => mango(400, 'unsupported_mixed_sort', 'Sorts currently only support a single direction for all fields.');
export const noIndexForSort = (): CouchError => mango(400, 'no_usable_index', 'No index exists for this sort, try indexing by the sort fields.');
/** The same in a partitioned database: a partition query has only partitioned indexes, a global one only global indexes. */
export const noScopedIndexForSort = (scope: 'partitioned' | 'global'): CouchError => mango(400, 'no_usable_index', `No ${scope} index exists for this sort, try indexing by the sort fields.`);
/** `POST _index` with a `partitioned` other than the existing design document's. */
export const partitionedOptionMismatch = (ddoc: string): CouchError =>
  mango(400, 'invalid_partitioned_option', `Requested partitioned option does not match existing value on design document ${ddoc}`);
export const invalidBookmark = (value: unknown): CouchError => mango(400, 'invalid_bookmark', `Invalid bookmark value: ${shown(value)}`);
export const useIndexUnsuitable = (ddoc: string, name?: string): CouchError =>
  mango(400, 'invalid_index', `_design/${ddoc}${name === undefined ? '' : `, ${name}`} specified by \`use_index\` could not be found or it is not suitable.`);
/** A string type is printed bare, as CouchDB prints it. */
export const invalidIndexType = (type: unknown): CouchError => mango(400, 'invalid_index', `Invalid type for index: ${typeof type === 'string' ? type : shown(type)}`);
export const indexServiceUnavailable = (type: string): CouchError => mango(503, 'required index service unavailable', type);
export const invalidIndexJson = (value: unknown): CouchError => mango(400, 'invalid_index', `JSON indexes must be an object, not: ${shown(value)}`);
export const invalidIndexName = (value: unknown): CouchError => mango(400, 'invalid_index_name', `Invalid index name: ${shown(value)}`);
export const emptyIndexName = (): CouchError => mango(400, 'invalid_empty_string', 'Index name or ddoc cannot be empty string');
export const invalidDdocLanguage = (value: unknown): CouchError => mango(400, 'invalid_ddoc_lang', `Existing design doc has an invalid language: ${shown(value)}`);
export const invalidBulkDelete = (value: unknown): CouchError => mango(400, 'invalid_bulk_docs', `Bulk Delete requires an array of non-null docids. Docids: ${shown(value)}`);
export const invalidListParams = (): CouchError => mango(500, 'invalid_list_index_params', 'Index parameter ranges: limit > 1, skip > 0');
export const ddocSaveConflict = (): CouchError => mango(500, 'error_saving_ddoc', 'Encountered a conflict while saving the design document.');
export const tooManyExamined = (max: number): CouchError =>
  mango(400, 'too_many_docs_examined', `The query would examine more than ${max} documents ([mango] max_docs_examined): add an index that serves its selector, or narrow it.`);
export const badField = (selector: unknown): CouchError => mango(400, 'bad_field', `Invalid field normalization on selector: ${shown(selector)}`);
export const invalidTextOperator = (operator: string): CouchError => mango(400, 'invalid_operator', `Invalid text operator: ${operator}`);
export const multipleNouveauIndexes = (): CouchError => mango(400, 'multiple_nouveau_indexes', 'You must specify an index with the `use_index` parameter.');
export const invalidIndexText = (value: unknown): CouchError => mango(400, 'invalid_index', `Text indexes must be an object, not: ${shown(value)}`);
export const invalidIndexFieldsDefinition = (fields: unknown): CouchError =>
  mango(
    400,
    'invalid_index_fields_definition',
    `Text Index field definitions must be of the form\n            {"name": "non-empty fieldname", "type":\n                "boolean,number,string or text"}. Def: ${shown(fields)}`,
  );
/** Divan's own: CouchDB 3.5 serves such a query from `_all_docs`, where `$text` matches every document. */
export const noTextIndex = (): CouchError => mango(400, 'no_usable_index', 'No nouveau index exists for this $text query, try creating one over the fields it searches.');
