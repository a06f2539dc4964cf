/**
 * Headers that keep an attachment from running script on the server's origin (CVE-2021-38295): a
 * member's HTML or SVG opened by a signed-in admin must not act with the admin's cookie.
 * `Content-Security-Policy: sandbox` (CouchDB's `[csp] attachments_*`) puts the page in an opaque
 * origin without script. When an operator relaxes that policy (CouchApps serve their pages from
 * design-document attachments), active types of ordinary documents, which any member may write,
 * are downloaded instead of rendered: design documents are written by database admins only.
 */
import type { Config } from '../config/config.js';

/** Media types a browser renders as a document that can run script. */
const ACTIVE_TYPES = new Set([
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'text/xml',
  'application/xml',
  'text/xsl',
  'application/xslt+xml',
  'application/mathml+xml',
  'application/rdf+xml',
  'text/rdf',
  'multipart/x-mixed-replace',
]);

/** The media type of a `Content-Type` value, lower-cased, without parameters. */
export function mediaType(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** `type/subtype` of RFC 9110 tokens: anything else is a type a browser may guess at. */
const MEDIA_TYPE = /^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+$/;

/** True for a type the browser may render as an active document (any `+xml` type, and any malformed type, included). */
export function isActiveType(contentType: string): boolean {
  const type = mediaType(contentType);
  return ACTIVE_TYPES.has(type) || type.endsWith('+xml') || !MEDIA_TYPE.test(type);
}

/** True when the policy keeps script off the origin: `sandbox` without both `allow-scripts` and `allow-same-origin`. */
export function policyIsolatesScript(policy: string): boolean {
  const directives = policy.toLowerCase().split(';').map((directive) => directive.trim().split(/\s+/));
  const sandbox = directives.find((tokens) => tokens[0] === 'sandbox');
  if (sandbox === undefined) return false;
  return !(sandbox.includes('allow-scripts') && sandbox.includes('allow-same-origin'));
}

/** `filename*` of RFC 6266 for the last segment of an attachment name. */
function dispositionFor(name: string): string {
  const file = name.slice(name.lastIndexOf('/') + 1);
  return `attachment; filename*=UTF-8''${encodeURIComponent(file)}`;
}

/** The safety headers of one attachment answer. */
export function attachmentSafetyHeaders(config: Config, contentType: string, documentId: string, name: string): Record<string, string> {
  const headers: Record<string, string> = { 'X-Content-Type-Options': 'nosniff' };
  const enabled = config.getBoolean('csp', 'attachments_enable');
  const policy = config.getString('csp', 'attachments_header_value').trim();
  if (enabled && policy !== '') headers['Content-Security-Policy'] = policy;
  const isolated = enabled && policyIsolatesScript(policy);
  if (!isolated && !documentId.startsWith('_design/') && isActiveType(contentType)) headers['Content-Disposition'] = dispositionFor(name);
  return headers;
}
