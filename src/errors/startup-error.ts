/** A start-up problem the user can fix (port in use, unreadable TLS files...); main prints its message as one line. */
export class StartupError extends Error {}
