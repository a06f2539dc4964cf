import type { Config } from '../config/config.js';
import { AuthChain } from './chain.js';
import { parseHandlerList } from './handler-list.js';
import type { AuthHandler } from './types.js';

/** Handlers this build provides, by CouchDB handler name (`cookie`, `default`, `proxy`, `jwt`). */
export type HandlerRegistry = ReadonlyMap<string, AuthHandler>;

export class AuthenticationConfigError extends Error {}

/** Builds the chain that `[chttpd] authentication_handlers` asks for, in its order. */
export function buildChain(config: Config, registry: HandlerRegistry, setting: string = config.getString('chttpd', 'authentication_handlers')): AuthChain {
  const parsed = parseHandlerList(setting);
  if (!parsed.ok) throw new AuthenticationConfigError(`[chttpd] authentication_handlers: ${parsed.reason}`);
  const handlers: AuthHandler[] = [];
  for (const spec of parsed.handlers) {
    const handler = registry.get(spec.name);
    if (!handler) throw new AuthenticationConfigError(`[chttpd] authentication_handlers: the ${spec.name} handler is not available`);
    handlers.push(handler);
  }
  return new AuthChain(handlers);
}
