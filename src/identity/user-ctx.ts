/** Who is calling: CouchDB's `userCtx`. `name` is null for anonymous callers. */
export interface UserCtx {
  name: string | null;
  roles: string[];
}

export const ANONYMOUS: Readonly<UserCtx> = Object.freeze({ name: null, roles: Object.freeze([]) as unknown as string[] });
