/**
 * What nodes tell each other, as one typed union. The wire form (topic + JSON payload string) is
 * kept small because PostgreSQL NOTIFY payloads are limited; `decodeMessage` refuses anything that
 * does not have exactly the expected shape, so a malformed or foreign message is dropped, never acted on.
 */

export type ClusterMessage =
  /** User documents changed: drop their cached credentials (`all` when too many to list). */
  | { topic: 'users'; ids: readonly string[] | 'all' }
  /** A password failed on the sending node: count it toward lockout here too. */
  | { topic: 'lockout'; peer: string; name: string; salt: string }
  /** A node generated and stored the shared cookie secret: reload it. */
  | { topic: 'secret' }
  /** A TOTP code was used on the sending node: refuse it as a replay here. */
  | { topic: 'totp'; name: string; salt: string; counter: number }
  /** These databases changed: wake their live `_changes` feeds. */
  | { topic: 'db'; dbs: readonly string[] }
  /** A design document of this database changed: drop its cached validation functions. */
  | { topic: 'ddocs'; db: string }
  /**
   * The writable configuration layer of the sending process changed (`value` null: the key left
   * it). Only between the worker processes of one server, which share their ini files; never over
   * PostgreSQL, since nodes keep their own configuration.
   */
  | { topic: 'config'; section: string; key: string; value: string | null };

export type ClusterTopic = ClusterMessage['topic'];

/** User ids beyond this many characters travel as `all` (NOTIFY payloads stay small). */
const MAX_LISTED_IDS_CHARS = 6000;
/** Database names per `db` message, so each message fits a NOTIFY payload. */
export const DBS_PER_MESSAGE = 40;

export function encodeMessage(message: ClusterMessage): { topic: ClusterTopic; payload: string } {
  switch (message.topic) {
    case 'users': {
      const listed = message.ids === 'all' ? undefined : JSON.stringify(message.ids);
      return { topic: 'users', payload: listed === undefined || listed.length > MAX_LISTED_IDS_CHARS ? '"all"' : listed };
    }
    case 'lockout':
      return { topic: 'lockout', payload: JSON.stringify([message.peer, message.name, message.salt]) };
    case 'secret':
      return { topic: 'secret', payload: '' };
    case 'totp':
      return { topic: 'totp', payload: JSON.stringify([message.name, message.salt, message.counter]) };
    case 'db':
      return { topic: 'db', payload: JSON.stringify(message.dbs) };
    case 'ddocs':
      return { topic: 'ddocs', payload: JSON.stringify(message.db) };
    case 'config':
      return { topic: 'config', payload: JSON.stringify([message.section, message.key, message.value]) };
  }
}

function parse(payload: string): unknown {
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return undefined;
  }
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** The message a topic and payload carry; undefined for an unknown topic or a malformed payload. */
export function decodeMessage(topic: string, payload: string): ClusterMessage | undefined {
  if (topic === 'secret') return { topic };
  const value = parse(payload);
  switch (topic) {
    case 'users':
      if (value === 'all') return { topic, ids: 'all' };
      return isStringArray(value) ? { topic, ids: value } : undefined;
    case 'lockout':
      return isStringArray(value) && value.length === 3 ? { topic, peer: value[0]!, name: value[1]!, salt: value[2]! } : undefined;
    case 'totp': {
      if (!Array.isArray(value) || value.length !== 3) return undefined;
      const [name, salt, counter] = value as unknown[];
      return typeof name === 'string' && typeof salt === 'string' && Number.isSafeInteger(counter)
        ? { topic, name, salt, counter: counter as number }
        : undefined;
    }
    case 'db':
      return isStringArray(value) ? { topic, dbs: value } : undefined;
    case 'ddocs':
      return typeof value === 'string' ? { topic, db: value } : undefined;
    case 'config': {
      if (!Array.isArray(value) || value.length !== 3) return undefined;
      const [section, key, setting] = value as unknown[];
      return typeof section === 'string' && typeof key === 'string' && (typeof setting === 'string' || setting === null)
        ? { topic, section, key, value: setting }
        : undefined;
    }
    default:
      return undefined;
  }
}
