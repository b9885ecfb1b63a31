import { isIP } from 'node:net';

/**
 * API_TRUST_PROXY: whose X-Forwarded-For the api believes (Fastify's `trustProxy`, evaluated by
 * @fastify/proxy-addr). The client address is then the right-most X-Forwarded-For entry that is not
 * a trusted proxy, so an address a client wrote into the header itself is never used when the
 * balancer appends the real one; a request that does not come from a trusted address keeps its
 * socket address whatever headers it carries.
 *
 * - `false` / `0` (default): the socket address, headers ignored.
 * - `true` / `1`: every hop is trusted: the LEFT-most entry wins, which any client can write. Only
 *   for an api that nothing but the proxy can reach.
 * - a comma-separated list of addresses, CIDR ranges or proxy-addr's names `loopback`, `linklocal`,
 *   `uniquelocal`: only those hops are trusted (docs/deployment-replicas.md, "Client addresses").
 */

export type TrustProxy = boolean | readonly string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The parsed setting, or a message saying which entry is wrong. */
export function parseTrustProxy(
  value: string,
): { ok: true; value: TrustProxy } | { ok: false; message: string } {
  const trimmed = value.trim();
  if (trimmed === 'true' || trimmed === '1') return { ok: true, value: true };
  if (trimmed === 'false' || trimmed === '0' || trimmed === '') return { ok: true, value: false };
  const entries = trimmed.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !validEntry(entry));
  if (bad.length > 0) {
    return {
      ok: false,
      message: `must be true, false or a comma-separated list of proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal); not valid: ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
    };
  }
  return { ok: true, value: Object.freeze(entries) };
}

function validEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const prefix = entry.slice(slash + 1);
  // Only a prefix length: proxy-addr also takes an IPv4 netmask, which is easy to get subtly wrong.
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
