import { BlockList, isIP } from 'node:net';

/**
 * Decides the client address: the socket's, unless the socket peer is a trusted proxy, in which
 * case the last `X-Forwarded-For` entry (the one the trusted proxy itself appended).
 */
export class PeerResolver {
  #setting = '';
  #trusted = new BlockList();

  constructor(setting: string) {
    this.configure(setting);
  }

  configure(setting: string): void {
    if (setting === this.#setting) return;
    const trusted = new BlockList();
    for (const entry of setting.split(',').map((item) => item.trim()).filter(Boolean)) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(address);
      if (family === 0) continue;
      const type = family === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) trusted.addAddress(address, type);
      // An out-of-range prefix is skipped like any other unreadable entry (BlockList would throw).
      else if (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32)) trusted.addSubnet(address, Number(prefix), type);
    }
    this.#trusted = trusted;
    this.#setting = setting;
  }

  isTrusted(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    return this.#trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  resolve(socketAddress: string | undefined, forwardedFor: string | string[] | undefined): string {
    const socketPeer = normalizeAddress(socketAddress ?? '');
    if (forwardedFor === undefined || !this.isTrusted(socketPeer)) return socketPeer;
    const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
    const last = header.split(',').map((item) => item.trim()).filter(Boolean).pop();
    return last && isIP(normalizeAddress(last)) !== 0 ? normalizeAddress(last) : socketPeer;
  }
}

/** `::ffff:127.0.0.1` (IPv4 on a dual-stack socket) is 127.0.0.1. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
