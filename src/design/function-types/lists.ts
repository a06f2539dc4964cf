import { renderErrorOf } from './render-error.js';
import type { DesignFunctionType } from './function-type.js';

/**
 * `lists.{name}`: `(head, req)`, reading the rows of a view with `getRow()` and sending its output
 * with `send()` (src/design/list-function.ts), called by `_list` (src/http/routes/lists.ts).
 * CouchDB compiles them when first called, not when the design document is saved.
 */
export const lists = {
  member: 'lists',
  functionsIn: () => [],
  errorOf: renderErrorOf,
} satisfies DesignFunctionType;
