/**
 * Ingest configuration: INGEST_* environment variables parsed and validated ONCE at start-up
 * (main.ts and the commands), mapped to the typed, frozen IngestConfig and passed down; nothing below
 * main.ts reads process.env (docs/architecture.md#configuration; api/src/config.ts is the same for
 * API_*). ingest/README.md has the table of variables, checked against ConfigSchema by
 * tests/readme-settings.test.ts.
 */
import { OwnershipError } from '@pda/projections/model';
import { z } from 'zod';
import { type AdminToken, readAdminToken } from './admin-token.ts';
import {
  KAFKA_SECURITY_SETTINGS,
  type KafkaSecurityConfig,
  kafkaSecurityOf,
  kafkaSecurityProblems,
} from './kafka/security.ts';
import { loadWriterOwnership, type WriterOwnership } from './kafka/writer-ownership.ts';
import {
  registryAccessProblems,
  SCHEMA_REGISTRY_ACCESS_SETTINGS,
  type SchemaRegistryConfig,
  schemaRegistryOf,
} from './schema-registry/settings.ts';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const ConfigSchema = z.object({
  INGEST_KAFKA_BROKERS: z
    .string()
    .min(1)
    .transform((s) =>
      s
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
    )
    .refine((list) => list.length > 0 && list.every((b) => /^[^\s:]+:\d{1,5}$/.test(b)), {
      message: 'expected host:port[,host:port...]',
    }),
  /** TLS and SASL (kafka/security.ts, ingest/README.md "Kafka over TLS and SASL"). */
  ...KAFKA_SECURITY_SETTINGS,
  INGEST_GROUP_ID: z.string().min(1).default('pda-ingest'),
  INGEST_CLIENT_ID: z.string().min(1).default('pda-ingest'),
  INGEST_TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default('pda'),
  INGEST_DATA_DIR: z.string().min(1),
  INGEST_ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  /** 0 = pick a free port (tests); the chosen port is logged. */
  INGEST_ADMIN_PORT: int(0, 65535).default(9464),
  /**
   * File holding the admin port's token (admin-token.ts), read once here: POST /rebuild and the
   * company lists of the port need it as `Authorization: Bearer`. Unset: rebuilds over the port are
   * refused (403) and no answer names a company.
   */
  INGEST_ADMIN_TOKEN_FILE: z
    .string()
    .min(1)
    .optional()
    .transform((file, ctx) => {
      if (file === undefined) return undefined;
      try {
        return readAdminToken(file);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Upper bound of changes per apply call; larger Kafka batches are applied in chunks with heartbeats between. */
  INGEST_MAX_BATCH_EVENTS: int(1, 1_000_000).default(2_000),
  /** /readyz is 200 only while the summed consumer lag is at most this many messages. */
  INGEST_READY_MAX_LAG: int(0, Number.MAX_SAFE_INTEGER).default(1000),
  /**
   * Company files kept open by the writer (3 file descriptors each): `auto` (default) = as many as
   * the descriptor limit allows after a reserve; a number above that is cut to it (logged at start).
   */
  INGEST_MAX_OPEN_COMPANIES: z.union([z.literal('auto'), int(1, 10_000_000)]).default('auto'),
  /**
   * Close a company file no batch wrote to for this many seconds (0 = never): a rarely changing
   * tenant then holds no descriptors, memory or WAL between its changes.
   */
  INGEST_IDLE_CLOSE_S: int(0, 86_400).default(120),
  /**
   * Prepared statements kept per open file (control.sqlite and each company file), most recently
   * used first; an evicted one is prepared again when needed (@pda/projections model/statement-lru.ts).
   */
  INGEST_MAX_STATEMENTS_PER_FILE: int(1, 100_000).default(256),
  /** Apply in a worker thread, overlapping with decoding (two cores); false = one thread. */
  INGEST_APPLY_THREAD: bool.default(true),
  /**
   * Events handed to the apply side and not yet committed, over all partitions (only with the
   * apply thread; else one chunk): chunks go without waiting for the previous ones, up to this bound.
   */
  INGEST_MAX_EVENTS_IN_FLIGHT: int(1, 10_000_000).default(20_000),
  /**
   * How far that bound (and the apply group) may grow while apply calls span many companies: room
   * for ~20 events per company touched, so a wide batch is not all commits (batch/group-bound.ts).
   */
  INGEST_MAX_EVENTS_IN_FLIGHT_WIDE: int(1, 10_000_000).default(160_000),
  /** Upper bound of events merged into one apply call (one transaction per company per call). */
  INGEST_APPLY_GROUP_MAX_EVENTS: int(1, 10_000_000).default(20_000),
  /** Partitions whose batches are processed concurrently (only with the apply thread; else 1). */
  INGEST_PARTITIONS_IN_FLIGHT: int(1, 64).default(3),
  INGEST_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Decimal encoding of events WITHOUT inline schema (the connector's decimal.handling.mode). */
  INGEST_DECIMAL_MODE: z.enum(['precise', 'string']).default('precise'),
  /** A new consumer group starts at the earliest offsets (projections are built from the topic start). */
  INGEST_FROM_BEGINNING: bool.default(true),
  /** Bytes per fetch response; kafkajs copies each response once (16 MiB: less copying than 64). */
  INGEST_FETCH_MAX_BYTES: int(1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  INGEST_SESSION_TIMEOUT_MS: int(6000, 300_000).default(30_000),
  /**
   * How long a stop (SIGTERM/SIGINT) may drain: wait for the chunks being applied, commit their
   * offsets, leave the group. A drain that cannot finish in time (the broker gone: commit and
   * disconnect retry) exits with code 1 and commits nothing more; what was applied and not committed
   * is read again at the next start (at-least-once, main.ts).
   */
  INGEST_DRAIN_TIMEOUT_MS: int(100, 3_600_000).default(15_000),
  /**
   * Tombstones (the deletions feed, GET /v1/deletions) are kept at least this long, then pruned;
   * the api answers an older filter[deleted_since] with 410 (ingest/README.md, "Tombstone retention").
   */
  INGEST_TOMBSTONE_RETENTION_S: int(1, 10 * 365 * 86_400).default(35 * 86_400),
  /**
   * How often a prune pass runs, of tombstones and of dead letters (the first one interval after
   * start); 0 = never prune.
   */
  INGEST_TOMBSTONE_PRUNE_INTERVAL_S: int(0, 7 * 86_400).default(3_600),
  /**
   * Dead letters (ingest/README.md, "Dead letters") are kept at most this long, and at most this
   * many (the newest); each prune pass deletes the others, oldest first, and a batch that adds
   * letters beyond the cap deletes as many of the oldest.
   */
  INGEST_DEAD_LETTER_RETENTION_S: int(1, 10 * 365 * 86_400).default(35 * 86_400),
  INGEST_DEAD_LETTER_MAX_ROWS: int(1, 100_000_000).default(100_000),
  /**
   * Base URL of the schema registry's Confluent-compatible API, for Avro records (their writer
   * schemas by id): Apicurio's `http://host:port/apis/ccompat/v7`. Unset: JSON only; an Avro record
   * then waits until it is set (ingest/README.md, "Avro and the schema registry").
   */
  INGEST_SCHEMA_REGISTRY_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Per request to the schema registry; a slower answer is retried with backoff. */
  INGEST_SCHEMA_REGISTRY_TIMEOUT_MS: int(100, 120_000).default(5_000),
  /** HTTPS with credentials and a private CA (schema-registry/settings.ts). */
  ...SCHEMA_REGISTRY_ACCESS_SETTINGS,
  /**
   * A writer of a deployment split by company (kafka/writer-ownership.ts): the ownership file shared by every
   * writer and api, and this writer's name in it. Both or neither; read once here.
   */
  INGEST_OWNERSHIP_FILE: z.string().min(1).optional(),
  INGEST_WRITER_NAME: z.string().min(1).optional(),
});

type Parsed = z.infer<typeof ConfigSchema>;

export interface IngestConfig {
  /** Projection directory (control.sqlite, companies/); may be a generation symlink (generations.ts). */
  readonly dataDir: string;
  readonly logLevel: Parsed['INGEST_LOG_LEVEL'];
  readonly kafka: {
    readonly brokers: readonly string[];
    /** TLS and SASL (kafka/security.ts); both undefined for PLAINTEXT. */
    readonly security: KafkaSecurityConfig;
    /** A generation's GENERATION.json overrides it (generations.ts). */
    readonly groupId: string;
    readonly clientId: string;
    /** Debezium's topic.prefix: the data topics and the heartbeat topic are named from it. */
    readonly topicPrefix: string;
    /** A new consumer group starts at the earliest offsets. */
    readonly fromBeginning: boolean;
    /** Bytes per fetch response. */
    readonly fetchMaxBytes: number;
    readonly sessionTimeoutMs: number;
  };
  /** The admin HTTP server (/healthz, /readyz, /metrics, /rebuild: admin-port/); port 0 picks a free one. */
  readonly admin: {
    readonly host: string;
    readonly port: number;
    /** Read from INGEST_ADMIN_TOKEN_FILE; undefined: rebuilds over the port are refused, no company named. */
    readonly token: AdminToken | undefined;
  };
  /** For Avro records (schema-registry/). */
  readonly schemaRegistry: SchemaRegistryConfig;
  /** Decimal encoding of events WITHOUT inline schema (the connector's decimal.handling.mode). */
  readonly decimalMode: Parsed['INGEST_DECIMAL_MODE'];
  /** From the Kafka batch to the writer (batch/, apply-thread/). */
  readonly apply: {
    /** Apply in a worker thread, overlapping with decoding; false = one thread. */
    readonly thread: boolean;
    /** Records decoded as one chunk. */
    readonly maxBatchEvents: number;
    /** Events handed to the apply side and not yet committed, over all partitions (apply thread only). */
    readonly maxEventsInFlight: number;
    /** How far that bound (and the apply group) may grow while apply calls span many companies. */
    readonly maxEventsInFlightWide: number;
    /** Upper bound of events merged into one apply call. */
    readonly maxGroupEvents: number;
    /** Partitions whose batches are processed concurrently (apply thread only; else 1). */
    readonly partitionsInFlight: number;
  };
  /** Company files kept open by the writer; `auto`: as many as the descriptor limit allows. */
  readonly maxOpenCompanies: number | 'auto';
  /** A company file no batch wrote to for this long is closed; 0 = never. */
  readonly idleCloseSeconds: number;
  /** Prepared statements kept per open file, most recently used first. */
  readonly maxStatementsPerFile: number;
  /** /readyz is 200 only while the summed consumer lag is at most this many messages. */
  readonly readyMaxLag: number;
  /** How long a stop may drain before the process exits 1 (main.ts). */
  readonly drainTimeoutMs: number;
  /** The deletions feed's retention (upkeep/tombstone-pruner.ts); a prune interval of 0 = never prune. */
  readonly tombstones: {
    readonly retentionSeconds: number;
    /** Also the dead letters' prune interval. */
    readonly pruneIntervalSeconds: number;
  };
  /** Dead letters kept at most this long, and at most this many (the newest). */
  readonly deadLetters: {
    readonly retentionSeconds: number;
    readonly maxRows: number;
  };
  /** This writer's partitions (INGEST_OWNERSHIP_FILE + INGEST_WRITER_NAME); undefined: all of them. */
  readonly ownership: WriterOwnership | undefined;
}

/** The ownership settings, checked together: both or neither, a readable file that names the writer. */
function ownershipOf(data: Parsed): { ownership?: WriterOwnership; problem?: string } {
  const file = data.INGEST_OWNERSHIP_FILE;
  const name = data.INGEST_WRITER_NAME;
  if (file === undefined && name === undefined) return {};
  if (file === undefined || name === undefined)
    return { problem: 'INGEST_OWNERSHIP_FILE and INGEST_WRITER_NAME: set both or neither' };
  try {
    return { ownership: loadWriterOwnership(file, name) };
  } catch (error) {
    if (error instanceof OwnershipError) return { problem: `INGEST_OWNERSHIP_FILE: ${error.message}` };
    throw error;
  }
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses and freezes; throws ConfigError with ONE line naming every bad or unknown INGEST_* variable. */
export function parseConfig(env: Readonly<Record<string, string | undefined>>): IngestConfig {
  const result = ConfigSchema.safeParse(env);
  // INGEST_* is this deployable's namespace: a misspelt variable must not be silently ignored
  // (README.md, Configuration).
  const unknown = Object.keys(env).filter(
    (name) => name.startsWith('INGEST_') && !(name in ConfigSchema.shape),
  );
  // Settings that are each valid but wrong together (SASL without its password, credentials over http).
  const owned = result.success ? ownershipOf(result.data) : {};
  const combinations = result.success
    ? [
        ...kafkaSecurityProblems(result.data),
        ...registryAccessProblems(result.data),
        ...(owned.problem ? [owned.problem] : []),
      ]
    : [];
  if (!result.success || unknown.length > 0 || combinations.length > 0) {
    const problems = [
      ...(result.success
        ? []
        : result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`)),
      ...combinations,
      ...unknown.map((name) => `${name}: unknown setting`),
    ];
    throw new ConfigError(`invalid ingest configuration: ${problems.join('; ')}`);
  }
  const e = result.data;
  const config: IngestConfig = {
    dataDir: e.INGEST_DATA_DIR,
    logLevel: e.INGEST_LOG_LEVEL,
    kafka: Object.freeze({
      brokers: Object.freeze([...e.INGEST_KAFKA_BROKERS]),
      security: kafkaSecurityOf(e),
      groupId: e.INGEST_GROUP_ID,
      clientId: e.INGEST_CLIENT_ID,
      topicPrefix: e.INGEST_TOPIC_PREFIX,
      fromBeginning: e.INGEST_FROM_BEGINNING,
      fetchMaxBytes: e.INGEST_FETCH_MAX_BYTES,
      sessionTimeoutMs: e.INGEST_SESSION_TIMEOUT_MS,
    }),
    admin: Object.freeze({
      host: e.INGEST_ADMIN_HOST,
      port: e.INGEST_ADMIN_PORT,
      token: e.INGEST_ADMIN_TOKEN_FILE,
    }),
    schemaRegistry: schemaRegistryOf(e),
    decimalMode: e.INGEST_DECIMAL_MODE,
    apply: Object.freeze({
      thread: e.INGEST_APPLY_THREAD,
      maxBatchEvents: e.INGEST_MAX_BATCH_EVENTS,
      maxEventsInFlight: e.INGEST_MAX_EVENTS_IN_FLIGHT,
      maxEventsInFlightWide: e.INGEST_MAX_EVENTS_IN_FLIGHT_WIDE,
      maxGroupEvents: e.INGEST_APPLY_GROUP_MAX_EVENTS,
      partitionsInFlight: e.INGEST_PARTITIONS_IN_FLIGHT,
    }),
    maxOpenCompanies: e.INGEST_MAX_OPEN_COMPANIES,
    idleCloseSeconds: e.INGEST_IDLE_CLOSE_S,
    maxStatementsPerFile: e.INGEST_MAX_STATEMENTS_PER_FILE,
    readyMaxLag: e.INGEST_READY_MAX_LAG,
    drainTimeoutMs: e.INGEST_DRAIN_TIMEOUT_MS,
    tombstones: Object.freeze({
      retentionSeconds: e.INGEST_TOMBSTONE_RETENTION_S,
      pruneIntervalSeconds: e.INGEST_TOMBSTONE_PRUNE_INTERVAL_S,
    }),
    deadLetters: Object.freeze({
      retentionSeconds: e.INGEST_DEAD_LETTER_RETENTION_S,
      maxRows: e.INGEST_DEAD_LETTER_MAX_ROWS,
    }),
    ownership: owned.ownership,
  };
  return Object.freeze(config);
}
