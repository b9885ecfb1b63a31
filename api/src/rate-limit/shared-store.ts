import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { type RefundCount, type WindowCount, WindowCounter } from './window-counter.ts';

/**
 * A store for @fastify/rate-limit that keeps one budget per key in Redis, shared by every api
 * process (docs/public-data-api-v1.md, "Limits": concurrent workers on one key share one budget).
 *
 * When Redis fails (down, unreachable, slower than the command timeout) the request is metered by
 * an in-process window instead: the api keeps answering and keeps limiting, each process with its
 * own budget, until Redis answers again. Neither fail-open without any limit nor fail-closed (a
 * Redis outage would take the whole read API down with it). Never a 500. One log line when the
 * outage starts and one when it ends, not one per request.
 */

// INCR + PEXPIRE in one script, atomic on the server: the window opens at the key's first request.
// A key found without a TTL (cannot happen through this script; defensive) gets one.
const INCREMENT_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if current == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}`;

const READ_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(current), ttl}`;

// Gives one request back, within the window that counted it (a key gone means a new window), at
// most ARGV[1] times per window: KEYS[2] counts the window's refunds and expires with it.
const REFUND_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return {0, 0, 0} end
current = tonumber(current)
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 or current <= 0 then return {current, math.max(ttl, 0), 0} end
local refunds = tonumber(redis.call('GET', KEYS[2]) or '0')
if refunds >= tonumber(ARGV[1]) then return {current, ttl, 0} end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ttl)
current = redis.call('DECR', KEYS[1])
return {current, ttl, 1}`;

/** The Redis key counting a budget's refunds in its window (beside `pda:rate-limit:<key>`). */
const REFUNDS_SUFFIX = ':refunds';

interface ScriptedRedis {
  pdaRateLimitRefund(key: string, refundsKey: string, maxRefunds: number): Promise<[number, number, number]>;
  pdaRateLimitIncrement(key: string, windowMs: number): Promise<[number, number]>;
  pdaRateLimitRead(key: string): Promise<[number, number]>;
}

type Callback = (error: Error | null, result?: WindowCount) => void;
type RefundCallback = (error: Error | null, result?: RefundCount) => void;

export interface SharedStoreOptions {
  readonly redis: Redis;
  /** Prefix of every Redis key (one per deployment sharing a Redis). */
  readonly namespace: string;
  /** Bound of the in-process fallback's keys. */
  readonly fallbackKeys: number;
  readonly log: FastifyBaseLogger;
}

/** Returns the store class the plugin instantiates (`store` option); all instances share state. */
export function sharedStore(options: SharedStoreOptions) {
  const { redis, namespace, log } = options;
  redis.defineCommand('pdaRateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  redis.defineCommand('pdaRateLimitRead', { numberOfKeys: 1, lua: READ_SCRIPT });
  redis.defineCommand('pdaRateLimitRefund', { numberOfKeys: 2, lua: REFUND_SCRIPT });
  const scripted = redis as unknown as ScriptedRedis;
  const fallback = new WindowCounter(options.fallbackKeys);
  let outage = false;

  const succeeded = () => {
    if (!outage) return;
    outage = false;
    log.info('rate limit: Redis answers again; budgets shared again');
  };
  const failed = (error: unknown) => {
    if (outage) return;
    outage = true;
    const reason = error instanceof Error ? error.message : String(error);
    log.warn({ reason }, 'rate limit: Redis failed; metering with per-process budgets until it answers');
  };

  return class SharedStore {
    incr(key: string, callback: Callback, windowMs: number): void {
      scripted.pdaRateLimitIncrement(namespace + key, windowMs).then(
        ([current, ttl]) => {
          succeeded();
          callback(null, { current, ttl });
        },
        (error: unknown) => {
          failed(error);
          callback(null, fallback.increment(key, windowMs));
        },
      );
    }

    read(key: string, callback: Callback, windowMs: number): void {
      scripted.pdaRateLimitRead(namespace + key).then(
        ([current, ttl]) => callback(null, { current, ttl }),
        () => callback(null, fallback.read(key, windowMs)),
      );
    }

    refund(key: string, maxRefunds: number, callback: RefundCallback, windowMs: number): void {
      scripted.pdaRateLimitRefund(namespace + key, namespace + key + REFUNDS_SUFFIX, maxRefunds).then(
        ([current, ttl, refunded]) => callback(null, { current, ttl, refunded: refunded === 1 }),
        () => callback(null, fallback.refund(key, windowMs, maxRefunds)),
      );
    }

    /** Per-route budgets are never configured (one budget per key across routes). */
    child(): SharedStore {
      return this;
    }
  };
}
