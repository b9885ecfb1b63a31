import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';

/**
 * The budget a request is metered against (docs/public-data-api-v1.md, "Limits"): one budget per API key,
 * shared by every route and by concurrent workers on that key; per client IP for health, version
 * and every request that presents no known key (missing, malformed, unknown), unknown paths and
 * malformed URLs included.
 *
 * The credential was resolved by the auth plugin's onRequest hook, which runs before the limiter's
 * (plugins/rate-limit.ts depends on pda-auth). An expired or revoked key is still a known key: it is
 * metered as that key, so a partner's stale workers do not spend the budget of everyone behind the
 * same NAT address. IPv6 clients are grouped by /64 (one customer allocation), as the library does.
 */
export function rateLimitKey(request: FastifyRequest): string {
  // `credential` is undefined on the bare request Fastify builds for a malformed URL.
  const credential = request.credential as FastifyRequest['credential'] | undefined;
  if (credential?.kind === 'key') return `key:${credential.key.id}`;
  return addressKey(request.ip);
}

/** The budget of a client address (also for answers given before any request exists). */
export function addressKey(address: string): string {
  return `ip:${normalizeIP(address)}`;
}
