import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Ownership, OwnershipError, ownershipWriter, readOwnershipFile } from '@pda/projections/model';
import { z } from 'zod';
import type { ConnectionLimits } from './connections/connection-limits.ts';
import { parseTrustProxy, type TrustProxy } from './connections/trust-proxy.ts';
import type { FairShareLimits } from './rate-limit/fair-shares.ts';

/**
 * The api's configuration: API_* environment variables parsed once at start-up (main.ts), frozen
 * and passed down. Nothing below main.ts reads process.env.
 */

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().min(1);
const timeoutMs = z.coerce.number().int().min(100).max(3_600_000);
const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/**
 * The API_* variables, each with its default and validation; api/README.md's Configuration table
 * lists them (checked by tests/readme-settings.test.ts).
 */
export const ConfigSchema = z.object({
  API_DATA_DIR: z.string().min(1, 'API_DATA_DIR is required (the directory holding control.sqlite)'),
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(8080),
  // Metrics and liveness (api/README.md, "Metrics"): a port of their own, never the public one.
  // 9465, not ingest's 9464: both deployables run side by side on one machine (scripts/demo.sh).
  API_ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  API_ADMIN_PORT: port.default(9465),
  API_PUBLIC_BASE_URL: optionalString.pipe(
    z.url({ protocol: /^https?$/, error: 'API_PUBLIC_BASE_URL must be an absolute http(s) URL' }).optional(),
  ),
  API_CURSOR_SECRET: z.string().min(32, 'API_CURSOR_SECRET must be at least 32 characters'),
  API_CURSOR_SECRET_PREVIOUS: optionalString.pipe(
    z.string().min(32, 'API_CURSOR_SECRET_PREVIOUS must be at least 32 characters').optional(),
  ),
  API_RATE_LIMIT_MAX: positiveInt.default(600),
  API_RATE_LIMIT_WINDOW_MS: positiveInt.default(60_000),
  // 304s given back to a key's budget per window (sync/conditional.ts); beyond, a 304 costs a request.
  API_NOT_MODIFIED_FREE_PER_WINDOW: z.coerce.number().int().min(0).max(1_000_000).default(60),
  API_REDIS_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  API_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // `auto`: as many company files as the descriptor limit allows (plugins/projections.ts).
  API_MAX_OPEN_COMPANIES: z.union([z.literal('auto'), positiveInt]).default('auto'),
  // Prepared statements per open file, most recently used first (@pda/projections model/statement-lru.ts).
  API_MAX_STATEMENTS_PER_FILE: positiveInt.max(100_000).default(256),
  API_REOPEN_CHECK_MS: z.coerce.number().int().min(0).default(1_000),
  // Threads that read list pages off the event loop (read-pool/read-pool.ts); 0 = on the loop.
  API_READ_THREADS: z.coerce.number().int().min(0).max(64).default(0),
  API_UPDATED_SINCE_OVERLAP_MS: z.coerce.number().int().min(0).default(60_000),
  API_HEALTH_MAX_STALENESS_S: z.coerce.number().positive().optional(),
  API_BUILD_INFO_FILE: z
    .string()
    .min(1)
    .default(fileURLToPath(new URL('../build-info.json', import.meta.url))),
  API_MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(1_000),
  API_MAX_HEAP_USED_BYTES: z.coerce.number().int().min(0).default(0),
  API_UNDER_PRESSURE_RETRY_AFTER_S: positiveInt.default(10),
  API_UNDER_PRESSURE_SAMPLE_INTERVAL_MS: z.coerce.number().int().min(100).default(1_000),
  API_UNDER_PRESSURE_SUSTAINED_SAMPLES: positiveInt.default(3),
  API_COMPRESS_MIN_BYTES: z.coerce.number().int().min(0).default(1_024),
  // SO_REUSEPORT: several api processes on one port, for a restart without refused connections
  // (docs/resilience.md, "The api restarted").
  API_REUSE_PORT: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  // Connection discipline (connections/connection-limits.ts; api/README.md, "Connections"): one client
  // must not hold every connection with idle or slow sockets.
  API_HEADERS_TIMEOUT_MS: timeoutMs.default(10_000),
  API_REQUEST_TIMEOUT_MS: timeoutMs.default(30_000),
  API_KEEP_ALIVE_TIMEOUT_MS: timeoutMs.default(5_000),
  // 0 = no cap per address (the process-wide bound of server.ts still holds).
  API_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).max(1_000_000).default(64),
  // On SIGTERM: how long open connections may take to end by themselves (connections/drain.ts); above the
  // keep-alive timeout + 1 s, idle kept-alive connections end without being cut.
  API_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  // Change-feed requests held by `wait` at once (changes/held-requests.ts); beyond: 503. 0 = none held.
  API_MAX_HELD_REQUESTS: z.coerce.number().int().min(0).max(1_000_000).default(1_000),
  // Fair shares (rate-limit/fair-shares.ts; api/README.md, "Fair shares"): requests in progress per
  // key and per company, and held change-feed requests per key; beyond them 429. 0 = no bound.
  API_MAX_IN_PROGRESS_PER_KEY: z.coerce.number().int().min(0).max(1_000_000).default(8),
  API_MAX_IN_PROGRESS_PER_COMPANY: z.coerce.number().int().min(0).max(1_000_000).default(16),
  API_MAX_HELD_REQUESTS_PER_KEY: z.coerce.number().int().min(0).max(1_000_000).default(100),
  // The change feed as a stream (changes/feed-stream.ts; api/README.md, "Change feed"): open streams
  // per key (429 beyond), a live stream's heartbeat and its lifetime (then it ends with a position).
  API_MAX_STREAMS_PER_KEY: z.coerce.number().int().min(0).max(1_000_000).default(2),
  API_STREAM_HEARTBEAT_S: z.coerce.number().int().min(1).max(300).default(15),
  API_STREAM_MAX_LIFETIME_S: z.coerce.number().int().min(1).max(86_400).default(300),
  // One request per key per turn of the event loop (rate-limit/key-turns.ts).
  API_FAIR_TURNS: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  // Writers split by company (api/README.md, "Writers split by company"): all three or none.
  API_OWNERSHIP_FILE: optionalString,
  API_WRITER_NAME: optionalString,
  API_FORWARD_SECRET_FILE: optionalString,
  // A hop to the owner: connecting, then its answer's headers (a held change-feed request adds its
  // `wait`); beyond them the partner gets 503 + Retry-After.
  API_FORWARD_CONNECT_TIMEOUT_MS: timeoutMs.default(2_000),
  API_FORWARD_TIMEOUT_MS: timeoutMs.default(10_000),
  API_FORWARD_RETRY_AFTER_S: positiveInt.max(3_600).default(5),
  // true/false, or the balancer's addresses/CIDRs (connections/trust-proxy.ts; docs/deployment-replicas.md).
  API_TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value, ctx) => {
      const parsed = parseTrustProxy(value);
      if (parsed.ok) return parsed.value;
      ctx.addIssue({ code: 'custom', message: parsed.message });
      return z.NEVER;
    }),
});

const schema = ConfigSchema.refine((e) => e.API_ADMIN_PORT === 0 || e.API_ADMIN_PORT !== e.API_PORT, {
  path: ['API_ADMIN_PORT'],
  message: 'must differ from API_PORT (metrics are never served on the public port)',
})
  // Node refuses a headers timeout above the request timeout: the headers are part of the request.
  .refine((e) => e.API_HEADERS_TIMEOUT_MS <= e.API_REQUEST_TIMEOUT_MS, {
    path: ['API_HEADERS_TIMEOUT_MS'],
    message: 'must not exceed API_REQUEST_TIMEOUT_MS (the headers are part of the request)',
  });

export interface Config {
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  /** The admin HTTP server (/healthz, /metrics: @pda/admin-http); port 0 picks a free one. */
  readonly admin: {
    readonly host: string;
    readonly port: number;
  };
  /** Origin (and optional path prefix) of links.*, without a trailing slash. */
  readonly publicBaseUrl: string;
  readonly cursorSecret: string;
  /** Also accepted when verifying cursors (never signs): the secret before a rotation. */
  readonly previousCursorSecret: string | undefined;
  readonly rateLimit: {
    readonly max: number;
    readonly windowMs: number;
    /** 304s per key and window whose request is given back; later ones are counted like any. */
    readonly notModifiedFree: number;
    readonly redisUrl: string | undefined;
  };
  readonly logLevel: string;
  /** Bound of the LRU of open company files. */
  readonly maxOpenCompanies: number | 'auto';
  /** Prepared statements kept per open projection file (an evicted one is prepared again on use). */
  readonly maxStatementsPerFile: number;
  /** Responses at least this large are compressed when the client accepts it; 0 = never compress. */
  readonly compressMinBytes: number;
  /** How often (at most) the data dir's identity is checked for a rebuild swap; 0 = every request. */
  readonly reopenCheckMs: number;
  /** Reader threads for list pages (read-pool/read-pool.ts); 0 = pages are read on the event loop. */
  readonly readThreads: number;
  /**
   * filter[updated_since] is widened by this much (docs/architecture.md#change-time-and-updated_since):
   * partner clock skew and a change time handed out just before a commit. The contract documents
   * 60 s; tests of the guarantee shrink it so a missed change would stay missed.
   */
  readonly updatedSinceOverlapMs: number;
  /** Health reports projections `degraded` when ingest's last batch is older; undefined = not judged. */
  readonly healthMaxStalenessSeconds: number | undefined;
  readonly buildInfoFile: string;
  /**
   * Whose X-Forwarded-For is believed for the client address (per-address rate limiting): false,
   * true (every hop), or the proxies' addresses / CIDR ranges (connections/trust-proxy.ts).
   */
  readonly trustProxy: TrustProxy;
  /** Listen with SO_REUSEPORT, so that another api process may share the port (Linux). */
  readonly reusePort: boolean;
  /** Change-feed requests held by `wait` at once (api/README.md, "Change feed"); beyond it 503. */
  readonly maxHeldRequests: number;
  /** A live change-feed stream's heartbeat interval and lifetime (changes/feed-stream.ts). */
  readonly streams: { readonly heartbeatMs: number; readonly lifetimeMs: number };
  /** Requests in progress per key and per company, held requests and streams per key (rate-limit/fair-shares.ts). */
  readonly fairShares: FairShareLimits;
  /** On close, the longest wait for open connections to end (connections/drain.ts). */
  readonly drainTimeoutMs: number;
  /** Timeouts and the per-address cap of client connections (connections/connection-limits.ts). */
  readonly connections: ConnectionLimits;
  /**
   * Writers split by company (plugins/forward.ts): the ownership file, this writer's name in it and
   * the secret that marks a hop between api nodes as trusted; undefined = one writer holds every
   * company (no forwarding, hop headers ignored).
   */
  readonly forwarding: ForwardingConfig | undefined;
  /** Load shedding (plugins/under-pressure.ts): 503 when the event loop lags or the heap grows beyond these (0 = off). */
  readonly underPressure: {
    readonly maxEventLoopDelayMs: number;
    readonly maxHeapUsedBytes: number;
    readonly retryAfterSeconds: number;
    /**
     * How often the process is sampled. At least 100 ms: the event-loop histogram records a delay
     * every 10 ms, and a sample should hold several (rate-limit/loop-delay.ts).
     */
    readonly sampleIntervalMs: number;
    /** Samples in a row over maxEventLoopDelayMs before requests are shed (one long turn is not overload). */
    readonly sustainedSamples: number;
  };
}

export interface ForwardingConfig {
  readonly ownershipFile: string;
  /** The file as read at start (checked: parseOwnership); plugins/forward.ts re-reads it when it changes. */
  readonly ownership: Ownership;
  readonly writerName: string;
  /** Sent on every hop (the secret file's first line); never logged. */
  readonly secret: string;
  /**
   * Accepted on arrival, compared in constant time: `secret` and, during a rotation, the file's
   * second line (docs/security.md, "Rotate the hop secret").
   */
  readonly acceptedSecrets: readonly string[];
  readonly connectTimeoutMs: number;
  /** Until the owner's answer headers arrive (and between its body's chunks); long polls add their `wait`. */
  readonly timeoutMs: number;
  /** Retry-After of the 503 answered when the owner cannot be reached (or ownership is out of step). */
  readonly retryAfterSeconds: number;
}

/** Shortest forward secret accepted, in bytes (as the cursor secret: 256 bits of a random hex string). */
export const MIN_FORWARD_SECRET_BYTES = 32;

function forwardingConfig(e: z.infer<typeof ConfigSchema>): ForwardingConfig | undefined {
  const { API_OWNERSHIP_FILE: file, API_WRITER_NAME: name, API_FORWARD_SECRET_FILE: secretFile } = e;
  if (file === undefined && name === undefined && secretFile === undefined) return undefined;
  if (file === undefined || name === undefined || secretFile === undefined) {
    throw new ConfigError(
      'invalid api configuration: API_OWNERSHIP_FILE, API_WRITER_NAME and API_FORWARD_SECRET_FILE go together (writers split by company): set all three or none',
    );
  }
  let ownership: Ownership;
  try {
    ownership = readOwnershipFile(file);
  } catch (error) {
    if (error instanceof OwnershipError) throw new ConfigError(`invalid api configuration: ${error.message}`);
    throw error;
  }
  try {
    ownershipWriter(ownership, name);
  } catch (error) {
    if (error instanceof OwnershipError)
      throw new ConfigError(`invalid api configuration: API_WRITER_NAME: ${error.message} (${file})`);
    throw error;
  }
  const secrets = readForwardSecrets(secretFile);
  return Object.freeze({
    ownershipFile: file,
    ownership,
    writerName: name,
    secret: secrets[0],
    acceptedSecrets: Object.freeze(secrets),
    connectTimeoutMs: e.API_FORWARD_CONNECT_TIMEOUT_MS,
    timeoutMs: e.API_FORWARD_TIMEOUT_MS,
    retryAfterSeconds: e.API_FORWARD_RETRY_AFTER_S,
  });
}

/**
 * The hop secret file: one line, the secret every node sends and accepts; during a rotation two,
 * the first sent and both accepted, so that nodes restarted one at a time never refuse each other
 * (docs/security.md, "Rotate the hop secret").
 */
function readForwardSecrets(secretFile: string): [string, ...string[]] {
  const problem = (text: string) =>
    new ConfigError(`invalid api configuration: API_FORWARD_SECRET_FILE ${secretFile}: ${text}`);
  let text: string;
  try {
    text = readFileSync(secretFile, 'utf8');
  } catch (error) {
    throw problem((error as NodeJS.ErrnoException).code ?? 'unreadable');
  }
  // A trailing newline (echo > file, a mounted secret) is not part of the secret.
  const lines = text.replace(/[\r\n]+$/, '').split(/\r?\n/);
  if (lines.length > 2) {
    throw problem(
      `${lines.length} lines: one secret, or two during a rotation (the one sent first, the one also accepted second)`,
    );
  }
  for (const secret of lines) {
    if (Buffer.byteLength(secret) < MIN_FORWARD_SECRET_BYTES || /[^\x21-\x7e]/.test(secret)) {
      throw problem(
        `the secret must be at least ${MIN_FORWARD_SECRET_BYTES} bytes of visible ASCII (e.g. openssl rand -hex 32), one per line`,
      );
    }
  }
  // split() returns at least one element.
  return lines as [string, ...string[]];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const result = schema.safeParse(env);
  // API_* is this deployable's namespace: a misspelt variable must not be silently ignored.
  const unknown = Object.keys(env).filter((name) => name.startsWith('API_') && !(name in ConfigSchema.shape));
  if (!result.success || unknown.length > 0) {
    const problems = [
      ...(result.success
        ? []
        : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)),
      ...unknown.map((name) => `${name}: unknown setting`),
    ];
    throw new ConfigError(`invalid api configuration: ${problems.join('; ')}`);
  }
  const e = result.data;
  const base =
    e.API_PUBLIC_BASE_URL ??
    `http://${e.API_HOST.includes(':') ? `[${e.API_HOST}]` : e.API_HOST}:${e.API_PORT}`;
  const config: Config = {
    dataDir: e.API_DATA_DIR,
    host: e.API_HOST,
    port: e.API_PORT,
    admin: Object.freeze({ host: e.API_ADMIN_HOST, port: e.API_ADMIN_PORT }),
    publicBaseUrl: base.replace(/\/+$/, ''),
    cursorSecret: e.API_CURSOR_SECRET,
    previousCursorSecret: e.API_CURSOR_SECRET_PREVIOUS,
    rateLimit: Object.freeze({
      max: e.API_RATE_LIMIT_MAX,
      windowMs: e.API_RATE_LIMIT_WINDOW_MS,
      notModifiedFree: e.API_NOT_MODIFIED_FREE_PER_WINDOW,
      redisUrl: e.API_REDIS_URL,
    }),
    logLevel: e.API_LOG_LEVEL,
    maxOpenCompanies: e.API_MAX_OPEN_COMPANIES,
    maxStatementsPerFile: e.API_MAX_STATEMENTS_PER_FILE,
    compressMinBytes: e.API_COMPRESS_MIN_BYTES,
    reopenCheckMs: e.API_REOPEN_CHECK_MS,
    readThreads: e.API_READ_THREADS,
    updatedSinceOverlapMs: e.API_UPDATED_SINCE_OVERLAP_MS,
    healthMaxStalenessSeconds: e.API_HEALTH_MAX_STALENESS_S,
    buildInfoFile: e.API_BUILD_INFO_FILE,
    trustProxy: e.API_TRUST_PROXY,
    reusePort: e.API_REUSE_PORT,
    maxHeldRequests: e.API_MAX_HELD_REQUESTS,
    streams: Object.freeze({
      heartbeatMs: e.API_STREAM_HEARTBEAT_S * 1000,
      lifetimeMs: e.API_STREAM_MAX_LIFETIME_S * 1000,
    }),
    fairShares: Object.freeze({
      perKey: e.API_MAX_IN_PROGRESS_PER_KEY,
      perCompany: e.API_MAX_IN_PROGRESS_PER_COMPANY,
      heldPerKey: e.API_MAX_HELD_REQUESTS_PER_KEY,
      streamsPerKey: e.API_MAX_STREAMS_PER_KEY,
      turns: e.API_FAIR_TURNS,
    }),
    drainTimeoutMs: e.API_DRAIN_TIMEOUT_MS,
    connections: Object.freeze({
      headersTimeoutMs: e.API_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.API_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.API_KEEP_ALIVE_TIMEOUT_MS,
      maxPerAddress: e.API_MAX_CONNECTIONS_PER_ADDRESS,
    }),
    forwarding: forwardingConfig(e),
    underPressure: Object.freeze({
      maxEventLoopDelayMs: e.API_MAX_EVENT_LOOP_DELAY_MS,
      maxHeapUsedBytes: e.API_MAX_HEAP_USED_BYTES,
      retryAfterSeconds: e.API_UNDER_PRESSURE_RETRY_AFTER_S,
      sampleIntervalMs: e.API_UNDER_PRESSURE_SAMPLE_INTERVAL_MS,
      sustainedSamples: e.API_UNDER_PRESSURE_SUSTAINED_SAMPLES,
    }),
  };
  return Object.freeze(config);
}
