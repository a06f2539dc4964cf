/**
 * Connection URLs and connection errors as they may be printed: never with a password, whichever
 * way the URL gives it (userinfo, query parameter, libpq `key=value`).
 */
const PASSWORD_PARAMS = ['password', 'sslpassword'];

/**
 * The URL as it may be printed: no password, neither in the userinfo nor as a query parameter.
 * A string that is not a URL (a libpq `key=value` string) loses its password values.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    for (const name of PASSWORD_PARAMS) parsed.searchParams.delete(name);
    return parsed.toString();
  } catch {
    // Not a WHATWG URL (a bad port, a libpq key=value string): drop what looks like a password.
    return url
      .replace(USERINFO, (_, scheme: string, user: string) => `${scheme}${user}@`)
      .replace(/\b(password|sslpassword)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]*)/gi, '$1=***');
  }
}

/** `scheme://user:password@` (up to the last `@`: a password may contain one). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^:@/]*):.*@/i;

/** The password in `url`, if any, so that it can be scrubbed from error messages. */
function passwordOf(url: string): string | undefined {
  let password: string | null = null;
  try {
    const parsed = new URL(url);
    password = parsed.password !== '' ? decodeURIComponent(parsed.password) : parsed.searchParams.get('password');
  } catch {
    const match = /^[a-z][a-z0-9+.-]*:\/\/[^:@/]*:(.*)@/i.exec(url);
    if (match !== null) password = match[1];
  }
  return password === null || password === '' ? undefined : password;
}

/** One line describing `error` (Node's AggregateError of a multi-address connect has no message). */
export function reasonOf(error: unknown, url?: string): string {
  let reason: string;
  if (error instanceof AggregateError && error.message === '' && error.errors.length > 0) {
    reason = reasonOf(error.errors[0]);
  } else if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    reason = error.message !== '' ? error.message : typeof code === 'string' ? code : error.name;
  } else {
    reason = String(error);
  }
  reason = reason.split('\n')[0].trim() || 'unknown error';
  const password = url === undefined ? undefined : passwordOf(url);
  return password === undefined ? reason : reason.split(password).join('***');
}
