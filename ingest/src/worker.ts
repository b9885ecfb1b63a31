/**
 * The ingest worker's lifecycle (docs/architecture.md#code-conventions: worker.ts builds, main.ts
 * parses config and starts): serve the admin port, open the projections, consume Kafka through the
 * shared decode → apply pipeline until the AbortSignal fires, then drain, commit and close.
 *
 * When `rebuild` swaps the data directory to a new generation (its realpath changes), the worker
 * drains, closes the old files and continues on the new generation with the consumer group that
 * built it (GENERATION.json), so there is never more than one writer per generation.
 */
import {
  isUuid,
  type OpenFilesBound,
  type ProjectionStoreOptions,
  processOpenFilesBound,
  type SourceTable,
  WRITER_DESCRIPTOR_RESERVE,
} from '@pda/projections';
import type { Logger } from 'pino';
import { startDeadLetterPruner } from './apply/dead-letter-pruner.ts';
import { createDurabilityBarrier } from './apply/durability.ts';
import { createGroupBound, type GroupBound } from './apply/group-bound.ts';
import { createPipeline, type Pipeline, type Prepared } from './apply/pipeline.ts';
import { ReopeningStore } from './apply/reopening-store.ts';
import { type ApplySink, inProcessSink } from './apply/sink.ts';
import { createStorageState, type StorageState } from './apply/storage-state.ts';
import { createThreadedSink } from './apply/threaded-sink.ts';
import { startTombstonePruner } from './apply/tombstone-pruner.ts';
import type { IngestConfig } from './config.ts';
import { type ColumnType, createDecoder, dataTopics, heartbeatTopic } from './decode/index.ts';
import { memberFilePath } from './kafka/predecessor.ts';
import { describeKafkaSecurity, kafkaConnectionOptions } from './kafka/security.ts';
import {
  createKafkaSource,
  type KafkaSource,
  type KafkaSourceOptions,
  type RecordsHandler,
} from './kafka/source.ts';
import { type AdminServer, startAdminServer } from './ops/admin-server.ts';
import { createMetrics, type IngestMetrics } from './ops/metrics.ts';
import { type CompanyRebuildResult, rebuildCompany } from './rebuild/company-rebuild.ts';
import { readGeneration, resolvedDataDir } from './rebuild/generations.ts';
import { type AvroSupport, createAvroSupport } from './schema-registry/index.ts';

export interface WorkerDeps {
  readonly logger: Logger;
  /** Column types from the .avsc files (for events without inline schema). */
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  readonly metrics?: IngestMetrics;
  /** Follow generation swaps of INGEST_DATA_DIR (default true; the rebuild builder turns it off). */
  readonly followSwaps?: boolean;
  /** Fail when a data topic is not compacted and lost its oldest events (the rebuild builder). */
  readonly refuseTruncatedTopics?: boolean;
}

export interface Worker {
  /** Resolves when stopped (drained and disconnected); rejects on an unrecoverable failure. */
  run(): Promise<void>;
  stop(): void;
  adminPort(): number | undefined;
  /** The Kafka source of the generation being written (lag, connection). */
  source(): KafkaSource | undefined;
  /**
   * Rebuilds one company's file while the others go on (rebuild/company-rebuild.ts); one at a time.
   * Resolves when the company is back in service.
   */
  rebuildCompany(companyId: string): Promise<CompanyRebuildResult>;
}

/** A per-company rebuild as /rebuild reports it. */
interface RebuildStatus {
  companyId: string;
  status: 'running' | 'done' | 'failed';
  startedAt: string;
  result?: CompanyRebuildResult;
  error?: string;
}

export function createWorker(config: IngestConfig, deps: WorkerDeps): Worker {
  const logger = deps.logger;
  const metrics = deps.metrics ?? createMetrics();
  const stopped = new AbortController();
  let admin: AdminServer | undefined;
  let source: KafkaSource | undefined;
  // Sized once from the descriptor limit (Node raised the soft limit to the hard one at start).
  const companyFiles = processOpenFilesBound(config.INGEST_MAX_OPEN_COMPANIES, WRITER_DESCRIPTOR_RESERVE);
  // Avro writer schemas by registry id, kept across generations (an id always names one schema).
  const avro = createAvroSupport(config, logger, metrics);
  const storage = createStorageState({
    dataDir: () => resolvedDataDir(config.INGEST_DATA_DIR) ?? config.INGEST_DATA_DIR,
    logger: logger.child({ component: 'storage' }),
    metrics,
  });
  /** The writer and group of the generation being written (a company rebuild goes through it). */
  let live: LiveGeneration | undefined;
  const rebuilds = createCompanyRebuilds(config, deps, avro, () => live);
  const readiness = readinessReport(config, { metrics, avro, storage, source: () => source, rebuilds });

  /** Runs one generation until stop() or until the data directory resolves elsewhere. */
  async function runGeneration(): Promise<void> {
    const resolved = resolvedDataDir(config.INGEST_DATA_DIR);
    const groupId = (resolved && readGeneration(resolved)?.groupId) ?? config.INGEST_GROUP_ID;
    const generation = generationSignal(config, deps, resolved, stopped.signal);
    // Grows while apply calls span many companies, so each gets several events per transaction.
    const inFlightBound = createGroupBound(
      config.INGEST_MAX_EVENTS_IN_FLIGHT,
      config.INGEST_MAX_EVENTS_IN_FLIGHT_WIDE,
    );
    const storeOptions = storeOptionsOf(config, resolved ?? config.INGEST_DATA_DIR, companyFiles.max);
    const sink = openSink(config, storeOptions);
    live = { sink, groupId, signal: generation.signal };
    const pruners = startPruners(config, sink, logger);
    try {
      const pipeline = createPipeline({
        decoder: createDecoder({
          topicPrefix: config.INGEST_TOPIC_PREFIX,
          bareDecimalMode: config.INGEST_DECIMAL_MODE,
          avscTypes: deps.avscTypes,
          writerSchemas: avro.writerSchemas,
        }),
        sink,
        metrics,
        logger: logger.child({ component: 'apply' }),
        maxGroupEvents: () => Math.max(config.INGEST_APPLY_GROUP_MAX_EVENTS, inFlightBound.current()),
        onApplied: (companies) => inFlightBound.observe(companies),
      });
      source = createKafkaSource(
        sourceOptions(config, deps, {
          groupId,
          dataDir: storeOptions.dataDir,
          inFlightBound,
          pipeline,
          storage,
          avro,
        }),
      );
      logger.info(
        { groupId, dataDir: storeOptions.dataDir, kafka: describeKafkaSecurity(config) },
        'consuming',
      );
      await source.run(recordsHandler(avro, pipeline, storage), generation.signal);
    } finally {
      live = undefined;
      generation.dispose();
      await pruners.stop();
      await sink.close();
    }
  }

  return {
    adminPort: () => admin?.port,
    source: () => source,
    stop: () => stopped.abort(),
    rebuildCompany: rebuilds.start,
    async run() {
      const gauges = startKafkaGauges(metrics, () => source);
      try {
        admin = await startAdminServer({
          host: config.INGEST_ADMIN_HOST,
          port: config.INGEST_ADMIN_PORT,
          registry: metrics.registry,
          readiness,
          token: config.INGEST_ADMIN_TOKEN_FILE,
          rebuildCompany: rebuilds.request,
          rebuilds: rebuilds.list,
        });
        logStarted(config, logger, admin.port, companyFiles);
        metrics.openCompanyFilesMax.set(companyFiles.max);
        while (!stopped.signal.aborted) await runGeneration();
        logger.info('ingest stopped: drained and disconnected');
      } finally {
        clearInterval(gauges);
        await admin?.close();
      }
    },
  };
}

/** The generation being written: its writer, its consumer group, and the signal that ends it. */
interface LiveGeneration {
  readonly sink: ApplySink;
  readonly groupId: string;
  readonly signal: AbortSignal;
}

/**
 * Ends a generation on stop() or when `rebuild` swapped the data directory (its realpath changed,
 * checked every second unless `followSwaps` is false). `dispose` when the generation is done.
 */
function generationSignal(
  config: IngestConfig,
  deps: WorkerDeps,
  resolved: string | undefined,
  stopped: AbortSignal,
): { signal: AbortSignal; dispose(): void } {
  const generation = new AbortController();
  const onStop = () => generation.abort();
  stopped.addEventListener('abort', onStop, { once: true });
  const watch = setInterval(() => {
    if (deps.followSwaps !== false && resolved && resolvedDataDir(config.INGEST_DATA_DIR) !== resolved) {
      deps.logger.info(
        { from: resolved, to: resolvedDataDir(config.INGEST_DATA_DIR) },
        'data directory swapped',
      );
      generation.abort();
    }
  }, 1000);
  return {
    signal: generation.signal,
    dispose() {
      clearInterval(watch);
      stopped.removeEventListener('abort', onStop);
    },
  };
}

function storeOptionsOf(
  config: IngestConfig,
  dataDir: string,
  maxOpenCompanies: number,
): ProjectionStoreOptions {
  return {
    dataDir,
    maxOpenCompanies,
    idleCloseMs: config.INGEST_IDLE_CLOSE_S * 1000,
    maxStatementsPerFile: config.INGEST_MAX_STATEMENTS_PER_FILE,
    deadLetters: {
      retentionMs: config.INGEST_DEAD_LETTER_RETENTION_S * 1000,
      maxRows: config.INGEST_DEAD_LETTER_MAX_ROWS,
    },
  };
}

/**
 * Exactly one writer: the store lives either in the apply thread or on this thread, where it is
 * opened lazily and closed after a storage fault, so the data directory can be remounted.
 */
function openSink(config: IngestConfig, storeOptions: ProjectionStoreOptions): ApplySink {
  return config.INGEST_APPLY_THREAD
    ? createThreadedSink(storeOptions)
    : inProcessSink(new ReopeningStore(storeOptions));
}

/** Tombstone and dead-letter retention, through the same writer, in steps between batches. */
function startPruners(config: IngestConfig, sink: ApplySink, logger: Logger): { stop(): Promise<void> } {
  const tombstones = startTombstonePruner({
    step: (options, cursor) => sink.pruneTombstones(options, cursor),
    retentionMs: config.INGEST_TOMBSTONE_RETENTION_S * 1000,
    intervalMs: config.INGEST_TOMBSTONE_PRUNE_INTERVAL_S * 1000,
    logger: logger.child({ component: 'prune' }),
  });
  // Dead-letter retention: the same writer, on the same interval.
  const deadLetters = startDeadLetterPruner({
    step: (maxRows) => sink.pruneDeadLetters(maxRows),
    intervalMs: config.INGEST_TOMBSTONE_PRUNE_INTERVAL_S * 1000,
    logger: logger.child({ component: 'prune' }),
  });
  return {
    async stop() {
      await tombstones.stop();
      await deadLetters.stop();
    },
  };
}

/** The Kafka source of one generation: the settings, and where its events go. */
function sourceOptions(
  config: IngestConfig,
  deps: WorkerDeps,
  parts: {
    groupId: string;
    dataDir: string;
    inFlightBound: GroupBound;
    pipeline: Pipeline;
    storage: StorageState;
    avro: AvroSupport;
  },
): KafkaSourceOptions {
  const { groupId, dataDir, inFlightBound, pipeline, storage, avro } = parts;
  const threaded = config.INGEST_APPLY_THREAD;
  return {
    brokers: config.INGEST_KAFKA_BROKERS,
    security: kafkaConnectionOptions(config),
    clientId: config.INGEST_CLIENT_ID,
    groupId,
    topics: dataTopics(config.INGEST_TOPIC_PREFIX),
    fromBeginning: config.INGEST_FROM_BEGINNING,
    maxBatchEvents: config.INGEST_MAX_BATCH_EVENTS,
    fetchMaxBytes: config.INGEST_FETCH_MAX_BYTES,
    sessionTimeoutMs: config.INGEST_SESSION_TIMEOUT_MS,
    partitionsInFlight: threaded ? config.INGEST_PARTITIONS_IN_FLIGHT : 1,
    // Without the apply thread each chunk is applied before the next is decoded.
    maxEventsInFlight: threaded ? inFlightBound.current : config.INGEST_MAX_BATCH_EVENTS,
    refuseTruncatedTopics: deps.refuseTruncatedTopics === true,
    heartbeatTopic: heartbeatTopic(config.INGEST_TOPIC_PREFIX),
    // While the storage is faulted the heartbeat's write fails like the batches: counted there,
    // not logged again every heartbeat.
    onSourceCurrent: (tsMs) =>
      pipeline.markSourceCurrent(tsMs).catch((error: unknown) => {
        if (!storage.failed(error)) throw error;
      }),
    readHeartbeat: avro.readHeartbeat,
    memberFile: memberFilePath(dataDir),
    durable: createDurabilityBarrier(dataDir),
    logger: deps.logger,
    // A full/read-only/failing disk: one line per fault (storage-state.ts), retried every 2 s.
    onApplyFailure: (error) =>
      storage.failed(error) ? { logged: true, retryMs: storage.retryMs } : { logged: false },
  };
}

/** Records → writer schemas fetched → decoded → applied; a successful apply clears a storage fault. */
function recordsHandler(
  avro: AvroSupport,
  pipeline: Pipeline,
  storage: StorageState,
): RecordsHandler<Prepared> {
  return {
    resolve: avro.resolve,
    prepare: (records) => pipeline.prepare(records),
    commit: async (prepared) => {
      await pipeline.apply(prepared);
      storage.applied();
    },
  };
}

/** Lag per partition and the connection, as gauges, every second. */
function startKafkaGauges(metrics: IngestMetrics, source: () => KafkaSource | undefined): NodeJS.Timeout {
  return setInterval(() => {
    for (const p of source()?.lag().partitions ?? []) {
      metrics.lag.set({ topic: p.topic, partition: String(p.partition) }, p.lag);
    }
    metrics.connected.set(source()?.connected() ? 1 : 0);
  }, 1000);
}

function logStarted(
  config: IngestConfig,
  logger: Logger,
  adminPort: number,
  companyFiles: OpenFilesBound,
): void {
  logger.info(
    {
      adminPort,
      openFileLimit: companyFiles.limit ?? null,
      maxOpenCompanies: companyFiles.max,
      maxOpenCompaniesFrom: companyFiles.source,
    },
    'ingest started',
  );
  if (companyFiles.source === 'clamped') {
    logger.warn(
      {
        configured: config.INGEST_MAX_OPEN_COMPANIES,
        used: companyFiles.max,
        openFileLimit: companyFiles.limit,
      },
      'INGEST_MAX_OPEN_COMPANIES needs more file descriptors than the limit allows (3 per file): cut to fit; raise the limit (ulimit -n, LimitNOFILE) to keep more files open',
    );
  }
}

/**
 * Per-company rebuilds (rebuild/company-rebuild.ts) through the live generation's writer, one at a
 * time: `start` runs one to its end, `request` is the admin port's (202, or 400/409 and why), `list`
 * what /rebuild and /readyz report.
 */
function createCompanyRebuilds(
  config: IngestConfig,
  deps: WorkerDeps,
  avro: AvroSupport,
  live: () => LiveGeneration | undefined,
) {
  const { logger } = deps;
  const rebuilds: RebuildStatus[] = [];

  /** Why a company rebuild cannot start now (admin port: 400 / 409), or undefined. */
  function refuse(companyId: string): { status: 400 | 409; error: string } | undefined {
    if (!isUuid(companyId)) {
      return { status: 400, error: `not a company id: ${JSON.stringify(String(companyId).slice(0, 64))}` };
    }
    if (rebuilds.some((r) => r.status === 'running')) {
      return { status: 409, error: 'a company rebuild is already running' };
    }
    if (!live()) return { status: 409, error: 'ingest is not consuming yet; retry in a few seconds' };
    return undefined;
  }

  async function start(companyId: string): Promise<CompanyRebuildResult> {
    const refused = refuse(companyId);
    const generation = live();
    if (refused || !generation) throw new RangeError(refused?.error ?? 'ingest is not consuming');
    const status: RebuildStatus = { companyId, status: 'running', startedAt: new Date().toISOString() };
    rebuilds.push(status);
    try {
      status.result = await rebuildCompany(companyId, {
        config,
        logger,
        sink: generation.sink,
        avscTypes: deps.avscTypes as (table: string) => ReadonlyMap<string, ColumnType> | undefined,
        avro,
        groupId: generation.groupId,
        signal: generation.signal,
      });
      status.status = 'done';
      return status.result;
    } catch (error) {
      status.status = 'failed';
      status.error = error instanceof Error ? error.message : String(error);
      logger.error(
        { companyId, err: status.error },
        'company rebuild failed: the company stays out of service; run it again',
      );
      throw error;
    }
  }

  return {
    start,
    request(companyId: string): { status: number; error?: string } {
      const refused = refuse(companyId);
      if (refused) return refused;
      // Runs on; its outcome is in /rebuild and /readyz `rebuilds`, and logged.
      start(companyId).catch(() => {});
      return { status: 202 };
    },
    list: (): readonly RebuildStatus[] => rebuilds,
  };
}
type CompanyRebuilds = ReturnType<typeof createCompanyRebuilds>;

/** /readyz: `withCompanies` = the admin request carried the token, so company ids may be listed. */
function readinessReport(
  config: IngestConfig,
  parts: {
    metrics: IngestMetrics;
    avro: AvroSupport;
    storage: StorageState;
    source: () => KafkaSource | undefined;
    rebuilds: CompanyRebuilds;
  },
) {
  const { metrics, avro, storage, rebuilds } = parts;
  return (withCompanies: boolean) => {
    const source = parts.source();
    const lag = source?.lag();
    const connected = source?.connected() ?? false;
    const ready =
      connected &&
      lag !== undefined &&
      lag.measured &&
      lag.total <= config.INGEST_READY_MAX_LAG &&
      avro.ready() &&
      !storage.faulted();
    const current = Math.max(metrics.lastSourceTsMs ?? 0, metrics.sourceCurrentAtMs ?? 0);
    return {
      ready,
      detail: {
        connected,
        lag: lag?.measured ? lag.total : null,
        max_lag: config.INGEST_READY_MAX_LAG,
        // How far behind the source the projections are known to be (heartbeats count while idle).
        source_lag_seconds: current > 0 ? Math.max(0, (Date.now() - current) / 1000) : null,
        schema_registry: avro.health(),
        // Full, read-only or failing data directory: nothing is applied until it accepts writes.
        storage: storage.health(),
        // Damaged company files (out of service until rebuilt); the others are applied. Not a
        // readiness failure: the process serves every other company. Counted for everyone, named
        // only to the admin token (ops/admin-server.ts).
        company_files: {
          damaged: metrics.companyFaults.filter((f) => f.state === 'damaged').length,
          rebuilding: metrics.companyFaults.filter((f) => f.state === 'rebuilding').length,
          ...(withCompanies && {
            out_of_service: metrics.companyFaults.map((f) => ({
              company_id: f.companyId,
              state: f.state,
              reason: f.reason,
              detected_at: new Date(f.detectedAtMs).toISOString(),
            })),
          }),
        },
        ...(withCompanies && { company_rebuilds: rebuilds.list().slice(-10) }),
      },
    };
  };
}
