import { SignJWT } from 'jose';

/** JWT, proxy, cookie and Basic, in that order: names may come from a token or a proxy header. */
export const EXTERNAL_HANDLERS =
  '{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, proxy_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';

/** Ini lines for EXTERNAL_HANDLERS with `secret` as the `hmac:_default` JWT key. */
export function externalAuthIni(secret: Buffer): string {
  return `[chttpd]\nauthentication_handlers = ${EXTERNAL_HANDLERS}\n[jwt_keys]\nhmac:_default = ${secret.toString('base64')}\n`;
}

/** An `Authorization` header with an HS256 token for `sub`, valid for a minute. */
export async function bearer(secret: Buffer, sub: string): Promise<{ Authorization: string }> {
  const token = await new SignJWT({ sub, exp: Math.floor(Date.now() / 1000) + 60 }).setProtectedHeader({ alg: 'HS256' }).sign(secret);
  return { Authorization: `Bearer ${token}` };
}
