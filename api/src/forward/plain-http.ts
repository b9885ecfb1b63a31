import { isIPv4 } from 'node:net';
import type { Ownership } from '@pda/projections/model';

/**
 * The writers this node forwards to over plain `http` to another machine (plugins/forward.ts warns
 * at start). A hop carries the partner's key and the hop secret in its headers: in clear on the
 * network unless the owner's `api` is `https` or on this machine (docs/security.md, "The hop
 * between writers"). Loopback only by the address itself or `localhost`: a name that resolves to
 * loopback is warned about (a false warning, never a missed one).
 */
export function plainHttpOwners(
  ownership: Ownership,
  self: string,
): { readonly name: string; readonly api: string }[] {
  return ownership.writers
    .filter((writer) => writer.name !== self)
    .filter((writer) => {
      const url = new URL(writer.api);
      return url.protocol === 'http:' && !isLoopback(url.hostname);
    })
    .map(({ name, api }) => ({ name, api }));
}

function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '[::1]') return true;
  return isIPv4(host) && host.startsWith('127.');
}
