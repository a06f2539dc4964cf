import { renderErrorOf } from './render-error.js';
import type { DesignFunctionType } from './function-type.js';

/**
 * `updates.{name}`: `(doc, req)` returning `[doc, response]`, called by `_update` (src/http/routes/updates.ts).
 * CouchDB compiles them when first called, not when the design document is saved.
 */
export const updates = {
  member: 'updates',
  functionsIn: () => [],
  errorOf: renderErrorOf,
} satisfies DesignFunctionType;
