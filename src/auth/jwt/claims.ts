/**
 * `[jwt_auth] required_claims` and the claim checks it turns on (docs/jwt.md, "Validation order"
 * rows 2, 4, 7–10, and "Required claims"). Only the listed claims are validated: an expired `exp` is ignored when `exp`
 * is not required, as in CouchDB 3.2+. Pure: the clock is an argument.
 *
 * @module
 */
import {
  expNotInFuture,
  invalidClaim,
  invalidTyp,
  missingClaim,
  missingTyp,
  nbfNotInPast,
} from '../../errors/jwt-errors.js';

/** The checks CouchDB's `jwtf` knows. `alg` is always on; `sig` is a no-op (signatures are always checked). */
const KNOWN_CHECKS: readonly string[] = ['alg', 'exp', 'iat', 'iss', 'kid', 'nbf', 'sig', 'typ'];

/** CouchDB 3.4+ default of `[jwt_auth] required_claims`. */
export const DEFAULT_REQUIRED_CLAIMS = 'exp';

export interface RequiredClaims {
  typ: boolean;
  /**
   * `undefined`: not checked. A string: `iss` must be present and equal to it. `true`: a bare
   * `iss` entry, which CouchDB turns into "present, and never equal" (every token with an `iss`
   * fails with `Invalid iss claim`); kept so a config behaves as it does on CouchDB.
   */
  iss: string | true | undefined;
  iat: boolean;
  nbf: boolean;
  exp: boolean;
  kid: boolean;
}

export type RequiredClaimsResult =
  | { ok: true; claims: RequiredClaims }
  /** `problem` is for the log only; the client sees 500 `misconfigured_server`. */
  | { ok: false; problem: string };

// CouchDB's regex (couch_httpd_auth:get_configured_claims): every bare lowercase word and every
// `{name, "value"}` tuple, anywhere in the value; whatever lies between matches is ignored.
const CLAIM = /([a-z]+)|\{([a-z]+)\s*,\s*"([^"]+)"\}/g;

/**
 * Parses `[jwt_auth] required_claims`, e.g. `exp, nbf, {iss, "MyCompany"}`.
 *
 * Refused (CouchDB answers these with a 500 too, some as a crash): a non-empty value with no
 * match at all, a check outside {@link KNOWN_CHECKS} (`sub`), a check listed twice (`alg` counts,
 * as it is always added), and a value on anything but `iss` (`{exp, "x"}`).
 *
 * @example parseRequiredClaims('exp, {iss, "hello"}') // {ok: true, claims: {exp: true, iss: 'hello', …}}
 */
export function parseRequiredClaims(value: string): RequiredClaimsResult {
  const claims: RequiredClaims = { typ: false, iss: undefined, iat: false, nbf: false, exp: false, kid: false };
  if (value.trim() === '') return { ok: true, claims };
  const matches = [...value.matchAll(CLAIM)];
  if (matches.length === 0) return { ok: false, problem: 'no claim names found' };
  const seen = new Set<string>(['alg']);
  for (const match of matches) {
    const name = match[1] ?? match[2];
    const tupleValue = match[1] === undefined ? match[3] : undefined;
    if (!KNOWN_CHECKS.includes(name)) return { ok: false, problem: `unknown check "${name}"` };
    if (seen.has(name)) return { ok: false, problem: `check "${name}" listed twice` };
    seen.add(name);
    if (tupleValue !== undefined && name !== 'iss') {
      return { ok: false, problem: `check "${name}" takes no value` };
    }
    switch (name) {
      case 'iss':
        claims.iss = tupleValue ?? true;
        break;
      case 'typ':
      case 'iat':
      case 'nbf':
      case 'exp':
      case 'kid':
        claims[name] = true;
        break;
      default:
        // `sig`: the signature is verified whether it is listed or not.
        break;
    }
  }
  return { ok: true, claims };
}

/** Row 4: `typ` is looked at only when it is required, and must then be exactly `JWT`. */
export function checkTyp(header: Readonly<Record<string, unknown>>, claims: RequiredClaims): void {
  if (!claims.typ) return;
  if (!Object.hasOwn(header, 'typ')) throw missingTyp();
  if (header.typ !== 'JWT') throw invalidTyp();
}

/**
 * Rows 7–10, in CouchDB's order: `iss`, `iat`, `nbf`, `exp`, each only when required. Times are
 * integer seconds and the comparisons strict with no leeway: `nbf < now` and `exp > now`.
 *
 * Divan is stricter than CouchDB in one place: a required `nbf`/`exp` that is not a finite number
 * (a string, `true`, `null`, an object) is refused. CouchDB compares it in Erlang term order, where
 * every non-number sorts after every number, so `"exp": "soon"` counted as "in the future" there
 * and the token never expired.
 *
 * @param nowSeconds the current time, whole seconds since the epoch
 */
export function checkPayloadClaims(
  payload: Readonly<Record<string, unknown>>,
  claims: RequiredClaims,
  nowSeconds: number,
): void {
  if (claims.iss !== undefined) {
    if (!Object.hasOwn(payload, 'iss')) throw missingClaim('iss');
    if (claims.iss === true || payload.iss !== claims.iss) throw invalidClaim('iss');
  }
  if (claims.iat) {
    if (!Object.hasOwn(payload, 'iat')) throw missingClaim('iat');
    if (!Number.isInteger(payload.iat)) throw invalidClaim('iat');
  }
  if (claims.nbf) {
    if (!Object.hasOwn(payload, 'nbf')) throw missingClaim('nbf');
    const nbf = payload.nbf;
    if (!(isFiniteNumber(nbf) && nbf < nowSeconds)) throw nbfNotInPast();
  }
  if (claims.exp) {
    if (!Object.hasOwn(payload, 'exp')) throw missingClaim('exp');
    const exp = payload.exp;
    if (!(isFiniteNumber(exp) && exp > nowSeconds)) throw expNotInFuture();
  }
}

export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
