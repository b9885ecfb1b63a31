import { once } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

/**
 * The Redis connection of the shared rate-limit budget, tuned so that a Redis outage costs a
 * request at most `commandTimeout`, never a hang: no offline queue (a command while disconnected
 * fails at once), no per-command retries, and reconnects in the background. The library's README
 * warns that ioredis' defaults are wrong for rate limiting (they queue and retry for seconds).
 */

const COMMAND_TIMEOUT_MS = 250;
const CONNECT_TIMEOUT_MS = 1_000;
const STARTUP_WAIT_MS = 2_000;

export async function connectRateLimitRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // The URL may carry a password: nothing here logs it; errors are reported by the store.
    lazyConnect: false,
  });
  // Without a listener ioredis prints every connection error; the store reports outages itself.
  redis.on('error', () => {});
  try {
    await Promise.race([
      once(redis, 'ready'),
      new Promise((_, reject) => setTimeout(reject, STARTUP_WAIT_MS, new Error('timeout')).unref()),
    ]);
    log.info('rate limit: budgets shared through Redis');
  } catch {
    // Starting is not refused: the api serves with per-process budgets until Redis answers.
    log.warn('rate limit: Redis not reachable at start; per-process budgets until it is');
  }
  return redis;
}
