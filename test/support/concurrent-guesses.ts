import type { HttpResponse } from './http.js';
import type { TestServer } from './server.js';
import { createUser } from './users-helpers.js';

export interface GuessesAnswered {
  wrong: HttpResponse[];
  right: HttpResponse;
}

/**
 * The concurrency attack on lockout: `count` wrong passwords sent at once and, as soon as the first
 * of them is answered (the others still being checked), the right one. Sent one after another, the
 * right one would meet a lock; CouchDB counts a failure only once its PBKDF2 has finished, so here
 * it used to get in.
 */
export async function wrongGuessesThenRight(send: (password: string) => Promise<HttpResponse>, right: string, count = 19): Promise<GuessesAnswered> {
  const guesses = Array.from({ length: count }, (_, i) => send(`wrong-guess-${i}`));
  await Promise.race(guesses);
  const rightAnswer = send(right);
  return { wrong: await Promise.all(guesses), right: await rightAnswer };
}

/** How many answers had each status, e.g. `{ 401: 5, 403: 14 }`. */
export function statusCounts(responses: readonly HttpResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/**
 * Makes a new user per call (`<prefix><n>`, password `<name>-pass`). Once a password has been
 * verified it is cached and wrong guesses fail without PBKDF2, so a test about checks that overlap
 * needs a user nobody has logged in as yet. `server` is read at each call (tests start it in `before`).
 */
export function coldUsers(server: () => TestServer, prefix: string): () => Promise<{ name: string; password: string }> {
  let count = 0;
  return async () => {
    const name = `${prefix}${++count}`;
    await createUser(server(), name, `${name}-pass`);
    return { name, password: `${name}-pass` };
  };
}
