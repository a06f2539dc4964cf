/**
 * Errors of a replication as `_replicate` answers them (couch_replicator_httpd and chttpd's
 * `error_info`): a bad request body, a database that cannot be opened, a remote that refuses us.
 */
class ReplicationFailure extends Error {
  readonly status: number;
  readonly error: string;
  readonly reason: string;

  constructor(status: number, error: string, reason: string) {
    super(`${error}: ${reason}`);
    this.status = status;
    this.error = error;
    this.reason = reason;
  }
}

/** A job that cannot run as asked: its status and reason are `_replicate`'s answer (permanent). */
export class ReplicationSpecError extends ReplicationFailure {}

/** A remote answered with an error or could not be reached; `status` is 0 for a network error. */
export class RemoteError extends ReplicationFailure {}

/** Whether a request that failed this way may succeed when tried again. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof RemoteError)) return false;
  return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
}
