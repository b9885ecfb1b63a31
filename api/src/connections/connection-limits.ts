import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { addressKey } from '../rate-limit/rate-limit-key.ts';
import type { TrustProxy } from './trust-proxy.ts';

/**
 * Connection discipline (api/README.md, "Connections"): without it one client holds every
 * connection the process can take — Fastify leaves connectionTimeout and requestTimeout at 0 and
 * keeps idle connections 72 s, so ~2,000 idle or slow sockets re-opened every minute lock a
 * directly exposed api out. Node closes a connection whose request headers (API_HEADERS_TIMEOUT_MS)
 * or whole request (API_REQUEST_TIMEOUT_MS) have not arrived in time, idle sockets included, and
 * an idle kept-alive one after API_KEEP_ALIVE_TIMEOUT_MS; no address holds more than
 * API_MAX_CONNECTIONS_PER_ADDRESS connections at once. Behind a trusted proxy every connection
 * comes from the proxy's address, so its connections are not capped here: plugins/connection-limits.ts
 * caps the requests in flight per forwarded client address instead.
 */

export interface ConnectionLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** 0 = no cap. */
  readonly maxPerAddress: number;
}

/**
 * Node checks the headers and request timeouts on a timer (every 30 s by default), so a slow
 * socket lives up to that much longer: check every quarter of the shorter timeout, at most once
 * every 50 ms and at least once a second.
 */
export function checkIntervalMs(limits: ConnectionLimits): number {
  const shorter = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return Math.min(1_000, Math.max(50, Math.floor(shorter / 4)));
}

/** Sets the timeouts on the public server; before it listens (the check timer starts then). */
export function applyTimeouts(server: Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // A createServer option that Node reads from the server when it starts listening; @types/node
  // declares only the option.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    checkIntervalMs(limits);
}

/**
 * Whether a peer is a proxy whose X-Forwarded-For is believed: the same rule, and the same library,
 * as Fastify's own `trustProxy` (connections/trust-proxy.ts), asked with the socket's address.
 */
export function trustedPeer(trustProxy: TrustProxy): (address: string) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === false) return () => false;
  const trust = proxyAddr.compile([...trustProxy]);
  return (address) => trust(address, 0);
}

/**
 * Closes, on arrival, a connection from an address that already holds `max` (IPv6: per /64, as the
 * rate limiter groups them), unless the peer is a trusted proxy. No answer is written: nothing has
 * been read yet, and an answer written before the request arrives can be lost to a reset. Returns
 * how many connections an address holds (tests).
 */
export function capConnectionsPerAddress(
  server: Server,
  options: { max: number; trusted: (address: string) => boolean; onRefused: () => void },
): (address: string) => number {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || options.trusted(address)) return;
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= options.max) {
      socket.destroy();
      options.onRefused();
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
  return (address) => open.get(addressKey(address)) ?? 0;
}

/** Requests in flight per forwarded client address (trusted proxies: plugins/connection-limits.ts). */
export class InFlightPerAddress {
  readonly #max: number;
  readonly #counts = new Map<string, number>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Counts a request in and returns its key for leave(); undefined (not counted) at `max` in flight. */
  enter(address: string): string | undefined {
    const key = addressKey(address);
    const count = this.#counts.get(key) ?? 0;
    if (count >= this.#max) return undefined;
    this.#counts.set(key, count + 1);
    return key;
  }

  leave(key: string): void {
    const left = (this.#counts.get(key) ?? 1) - 1;
    if (left > 0) this.#counts.set(key, left);
    else this.#counts.delete(key);
  }
}
