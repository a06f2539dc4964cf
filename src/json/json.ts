/** JSON values as documents, bodies and query parameters carry them. A leaf: it imports nothing. */
export type Json = null | boolean | number | string | Json[] | JsonObject;

export interface JsonObject {
  [key: string]: Json;
}
