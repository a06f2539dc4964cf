/**
 * The one error type that crosses layers. Anything thrown below the HTTP layer that is not a
 * CouchError is a bug and is answered as a 500 `unknown_error` (and logged once).
 */
export class CouchError extends Error {
  readonly status: number;
  readonly error: string;
  readonly reason: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, error: string, reason: string, headers: Record<string, string> = {}) {
    super(`${error}: ${reason}`);
    this.name = 'CouchError';
    this.status = status;
    this.error = error;
    this.reason = reason;
    this.headers = headers;
  }

  toJSON(): { error: string; reason: string } {
    return { error: this.error, reason: this.reason };
  }
}

export function isCouchError(value: unknown): value is CouchError {
  return value instanceof CouchError;
}
