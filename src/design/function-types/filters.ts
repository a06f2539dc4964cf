import { javascriptError } from '../../errors/catalog.js';
import { isObject, namedSources, type DesignFunctionType } from './function-type.js';

/** `filters.{name}`: `(doc, req)`, a truthy answer lets the document into a `_changes` feed or a replication. */
export const filters = {
  member: 'filters',
  functionsIn: (ddoc) => namedSources(ddoc, 'filters').map(([name]) => ({ path: ['filters', name], prefix: `Compilation of the filter function '${name}' failed: ` })),
  /**
   * What a filter function threw, as CouchDB's query server reports it: the request fails (an
   * Error as its name and message; `{error, reason}` as given).
   */
  errorOf: ({ error }) => {
    if (isObject(error) && typeof error['error'] === 'string') {
      const reason = error['reason'] ?? error['message'];
      return javascriptError(error['error'], typeof reason === 'string' ? reason : JSON.stringify(reason ?? null));
    }
    return javascriptError('unnamed_error', JSON.stringify(error));
  },
} satisfies DesignFunctionType;
