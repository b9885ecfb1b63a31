import type { FastifyReply } from 'fastify';

/**
 * What keeps one tenant's answers out of shared caches (api/README.md, "Response headers"): every
 * answer to a key and every problem is `Cache-Control: private, no-store` and varies on the two
 * request headers that choose whose data it is. Every response is `nosniff` (setStandardHeaders).
 */
export const PRIVATE_CACHE_CONTROL = 'private, no-store';
export const PRIVATE_VARY: readonly string[] = ['Authorization', 'X-Service-Company'];
export const NOSNIFF = 'nosniff';

/** The three, for answers written to the socket without a reply (connections/client-error.ts). */
export const PRIVATE_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': PRIVATE_CACHE_CONTROL,
  Vary: PRIVATE_VARY.join(', '),
  'X-Content-Type-Options': NOSNIFF,
};

/** Cache-Control unless the answer chose its own, and the private Vary names. */
export function markPrivate(reply: FastifyReply): void {
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', PRIVATE_CACHE_CONTROL);
  addVary(reply, PRIVATE_VARY);
}

/**
 * Appends to Vary, never replacing it (compression adds Accept-Encoding, before or after this);
 * a name already listed, in any case, is not repeated, and `*` already varies on everything.
 */
export function addVary(reply: FastifyReply, names: readonly string[]): void {
  const current = reply.getHeader('vary');
  const text = Array.isArray(current) ? current.join(',') : current === undefined ? '' : String(current);
  const listed = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (listed.includes('*')) return;
  const lower = new Set(listed.map((name) => name.toLowerCase()));
  for (const name of names) {
    if (lower.has(name.toLowerCase())) continue;
    listed.push(name);
    lower.add(name.toLowerCase());
  }
  reply.header('vary', listed.join(', '));
}
