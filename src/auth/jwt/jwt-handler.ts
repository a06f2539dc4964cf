/**
 * `jwt_authentication_handler` (docs/jwt.md, "Validation order"): `Authorization: Bearer <JWT>` signed with
 * a key from `[jwt_keys]` (or, as a Divan extension, from an identity provider's JWKS).
 *
 * @module
 */
import type { Config } from '../../config/config.js';
import type { Logger } from '../../log/logger.js';
import type { UserCtx } from '../../identity/user-ctx.js';
import type { AuthHandler, AuthOutcome, AuthRequest } from '../types.js';
import { isMacAlgorithm, type JwtAlgorithm, keyKindOf } from './algorithms.js';
import {
  checkPayloadClaims,
  checkTyp,
  DEFAULT_REQUIRED_CLAIMS,
  parseRequiredClaims,
  type RequiredClaimsResult,
} from './claims.js';
import {
  badHmac,
  badSignature,
  malformedToken,
  misconfiguredServer,
  missingClaim,
  missingSub,
  notAValidKey,
  unknownKid,
} from '../../errors/jwt-errors.js';
import {
  JwksStore,
  parseJwksUrls,
} from './jwks.js';
import { DEFAULT_KID, JWT_KEYS_SECTION, KeyRing } from './key-ring.js';
import { DEFAULT_ROLES_CLAIM_NAME, extractRoles, parseRolesClaimPath, type RolesSource } from './roles.js';
import { type SignatureVerifier, verifySignature } from './signature.js';
import { TokenCache } from './token-cache.js';
import { decodeJsonObject, readAlg, splitToken } from './token.js';
import type { VerificationKey } from './verification-key.js';

const JWT_AUTH_SECTION = 'jwt_auth';
const BEARER = 'Bearer ';

export interface JwtHandlerOptions {
  /** The clock, milliseconds since the epoch. */
  now?: () => number;
  /** Used for JWKS requests. */
  fetch?: typeof fetch;
  /** Replaces the signature check; tests count calls through it. */
  verifySignature?: SignatureVerifier;
  /** JWKS request timeout in milliseconds (default 5000). */
  jwksTimeoutMs?: number;
}

interface Settings {
  claims: RequiredClaimsResult;
  roles: RolesSource;
  cache: TokenCache;
}

/**
 * Validates in CouchDB's order (docs/jwt.md, "Validation order"), first failure wins, and every failure throws:
 * three parts → header → `typ` (if required) → `alg` → payload → `iss`/`iat`/`nbf`/`exp` (if
 * required) → key → signature → roles → `sub`. Claims come before the signature, so an expired
 * token with a bad signature answers 401 `exp not in future`, as CouchDB does.
 *
 * @example
 * const jwt = new JwtHandler(config, log);
 * await jwt.authenticate(request); // {userCtx: {name: <sub>, roles}} | undefined (not a Bearer request)
 */
export class JwtHandler implements AuthHandler {
  readonly name = 'jwt';
  readonly #config: Config;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #fetch: typeof fetch | undefined;
  readonly #verify: SignatureVerifier;
  readonly #jwksTimeoutMs: number | undefined;
  readonly #ring: KeyRing;
  readonly #unsubscribe: () => void;
  #settings: Settings | undefined;
  #jwks: { signature: string; store: JwksStore | undefined } | undefined;
  /** Bumped on every relevant change, so a validation that straddles one is not cached. */
  #generation = 0;

  constructor(config: Config, log: Logger, options: JwtHandlerOptions = {}) {
    this.#config = config;
    this.#log = log;
    this.#now = options.now ?? Date.now;
    this.#fetch = options.fetch;
    this.#verify = options.verifySignature ?? verifySignature;
    this.#jwksTimeoutMs = options.jwksTimeoutMs;
    this.#ring = new KeyRing(config, log);
    this.#unsubscribe = config.onChange(({ section }) => {
      if (section !== JWT_KEYS_SECTION && section !== JWT_AUTH_SECTION) return;
      this.#forgetVerifiedTokens();
      if (section === JWT_AUTH_SECTION) this.#settings = undefined;
    });
  }

  mayAnswer(request: AuthRequest): boolean {
    const authorization = request.headers.authorization;
    return typeof authorization === 'string' && authorization.startsWith(BEARER);
  }

  /** Without a promise for a token verified before (still cached): clients send the same one on every request. */
  authenticate(request: AuthRequest): AuthOutcome | Promise<AuthOutcome> {
    const authorization = request.headers.authorization;
    if (typeof authorization !== 'string' || !authorization.startsWith(BEARER)) return undefined;
    const token = authorization.slice(BEARER.length);
    const settings = this.#currentSettings();
    // Only tokens that verified under these very settings are cached: a hit is well-formed.
    const cached = settings.claims.ok ? settings.cache.get(token, this.#now()) : undefined;
    if (cached !== undefined) return { userCtx: cached };
    return this.#verifyToken(token, settings);
  }

  async #verifyToken(token: string, settings: Settings): Promise<AuthOutcome> {
    const [encodedHeader, encodedPayload] = splitToken(token);
    if (!settings.claims.ok) throw misconfiguredServer();
    const nowMs = this.#now();
    const generation = this.#generation;
    const claims = settings.claims.claims;
    const header = decodeJsonObject(encodedHeader);
    checkTyp(header, claims);
    const alg = readAlg(header);
    const payload = decodeJsonObject(encodedPayload);
    checkPayloadClaims(payload, claims, Math.floor(nowMs / 1000));
    if (claims.kid && !Object.hasOwn(header, 'kid')) throw missingClaim('kid');
    const key = await this.#key(alg, header);
    if (!(await this.#signatureHolds(token, key, alg))) throw isMacAlgorithm(alg) ? badHmac() : badSignature();
    const roles = extractRoles(payload, settings.roles);
    const userCtx: UserCtx = { name: subject(payload), roles };
    if (generation === this.#generation) settings.cache.set(token, userCtx, nowMs, payload.exp);
    return { userCtx };
  }

  /** The token's `exp` (the token verified when the request was authenticated). */
  credentialExpiry(request: AuthRequest): number | undefined {
    const authorization = request.headers.authorization;
    if (typeof authorization !== 'string' || !authorization.startsWith(BEARER)) return undefined;
    try {
      const exp = decodeJsonObject(splitToken(authorization.slice(BEARER.length))[1])['exp'];
      return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops following config changes. */
  close(): void {
    this.#unsubscribe();
    this.#ring.close();
  }

  /**
   * `[jwt_keys] <kind>:<kid>` (kind from the alg family, kid `_default` when the token has none)
   * wins; a token naming an unconfigured kid may then be served from the JWKS. No fallback from a
   * named kid to `_default`.
   */
  async #key(alg: JwtAlgorithm, header: Readonly<Record<string, unknown>>): Promise<VerificationKey> {
    const kind = keyKindOf(alg);
    const hasKid = Object.hasOwn(header, 'kid');
    // CouchDB crashes (500) on a non-string kid; no configured key can have such a name.
    if (hasKid && typeof header.kid !== 'string') throw unknownKid();
    const kid = hasKid ? (header.kid as string) : undefined;
    const configured = this.#ring.get(kind, kid ?? DEFAULT_KID);
    if (configured !== undefined) return configured;
    if (kid !== undefined) {
      const published = await this.#jwksStore()?.find(kind, kid, alg);
      if (published !== undefined) return published;
    }
    throw unknownKid();
  }

  async #signatureHolds(token: string, key: VerificationKey, alg: JwtAlgorithm): Promise<boolean> {
    if (!key.supports(alg)) return false;
    let cryptoKey;
    try {
      cryptoKey = await key.cryptoKey(alg);
    } catch {
      throw notAValidKey();
    }
    return this.#verify(token, cryptoKey, alg);
  }

  #currentSettings(): Settings {
    if (this.#settings !== undefined) return this.#settings;
    const config = this.#config;
    const claims = parseRequiredClaims(config.get(JWT_AUTH_SECTION, 'required_claims') ?? DEFAULT_REQUIRED_CLAIMS);
    if (!claims.ok) {
      // Once per change of [jwt_auth], not once per request.
      this.#log.error(
        `jwt: [jwt_auth] required_claims is set to an invalid value (${claims.problem}); ` +
          'every JWT request answers 500 until it is fixed',
      );
    }
    const path = config.get(JWT_AUTH_SECTION, 'roles_claim_path');
    const roles: RolesSource = {
      name: config.get(JWT_AUTH_SECTION, 'roles_claim_name') ?? DEFAULT_ROLES_CLAIM_NAME,
      path: path === undefined || path === '' ? undefined : parseRolesClaimPath(path),
    };
    const cache = new TokenCache(
      config.getInteger('jwt_auth', 'token_cache_size'),
      seconds(config.getInteger('jwt_auth', 'token_cache_max_age')),
    );
    this.#settings = { claims, roles, cache };
    return this.#settings;
  }

  /** The JWKS store for the current `jwks_*` settings; rebuilt only when those change. */
  #jwksStore(): JwksStore | undefined {
    const config = this.#config;
    const value = config.get(JWT_AUTH_SECTION, 'jwks_url');
    const refresh = config.getInteger('jwt_auth', 'jwks_refresh_interval');
    const ttl = config.getInteger('jwt_auth', 'jwks_cache_ttl');
    const signature = JSON.stringify([value, refresh, ttl]);
    if (this.#jwks?.signature === signature) return this.#jwks.store;
    const { urls, problems } = parseJwksUrls(value);
    for (const problem of problems) this.#log.warning(`jwt: [jwt_auth] jwks_url: ${problem}`);
    const store =
      urls.length === 0
        ? undefined
        : new JwksStore({
            urls,
            refreshIntervalMs: seconds(refresh),
            cacheTtlMs: seconds(ttl),
            log: this.#log,
            timeoutMs: this.#jwksTimeoutMs,
            fetch: this.#fetch,
            now: this.#now,
            onKeysChanged: () => this.#forgetVerifiedTokens(),
          });
    this.#jwks = { signature, store };
    return store;
  }

  #forgetVerifiedTokens(): void {
    this.#generation++;
    this.#settings?.cache.clear();
  }
}

/**
 * Row 14: `sub` is the user name. Absent (or empty, which would read as "no name" to much code)
 * → 401 `Token missing sub claim.`; not a string → 400 `Malformed token` (CouchDB would put a
 * number or an object into `userCtx.name`).
 */
function subject(payload: Readonly<Record<string, unknown>>): string {
  if (!Object.hasOwn(payload, 'sub') || payload.sub === '') throw missingSub();
  if (typeof payload.sub !== 'string') throw malformedToken();
  return payload.sub;
}

function seconds(value: number): number {
  return Math.max(0, value) * 1000;
}
