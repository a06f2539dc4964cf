import { renderErrorOf } from './render-error.js';
import type { DesignFunctionType } from './function-type.js';

/**
 * `shows.{name}`: `(doc, req)` returning a response object or a string, called by `_show`
 * (src/http/routes/shows.ts). CouchDB compiles them when first called, not when the design document is saved.
 */
export const shows = {
  member: 'shows',
  functionsIn: () => [],
  errorOf: renderErrorOf,
} satisfies DesignFunctionType;
