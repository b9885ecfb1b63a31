/**
 * The ingest worker's lifecycle (docs/architecture.md#code-conventions: worker.ts builds, main.ts
 * parses config and starts): serve the admin port, open the projections, consume Kafka through the
 * shared decode → apply pipeline until the AbortSignal fires, then drain, commit and close.
 *
 * When `rebuild` swaps the data directory to a new generation (its realpath changes), the worker
 * drains, closes the old files and continues on the new generation with the consumer group that
 * built it (GENERATION.json), so there is never more than one writer per generation.
 */

import type { Tracer } from '@opentelemetry/api';
import { type OpenFilesBound, processOpenFilesBound, type SourceTable } from '@pda/projections/model';
import { type ProjectionStoreOptions, WRITER_DESCRIPTOR_RESERVE } from '@pda/projections/write';
import type { Logger } from 'pino';
import { type AdminServer, startAdminServer } from './admin-port/admin-server.ts';
import { readinessReport } from './admin-port/readiness.ts';
import { ReopeningStore } from './apply-thread/reopening-store.ts';
import { type ApplySink, inProcessSink } from './apply-thread/sink.ts';
import { createThreadedSink } from './apply-thread/threaded-sink.ts';
import { createDurabilityBarrier } from './batch/durability.ts';
import { createGroupBound, type GroupBound } from './batch/group-bound.ts';
import { createPipeline, type Pipeline, type Prepared } from './batch/pipeline.ts';
import { createStorageState, type StorageState } from './batch/storage-state.ts';
import type { IngestConfig } from './config.ts';
import { type ColumnType, createDecoder, dataTopics, heartbeatTopic } from './decode/index.ts';
import { readGeneration, resolvedDataDir } from './generations.ts';
import type { RecordsHandler } from './kafka/hand-over.ts';
import { memberFilePath } from './kafka/predecessor.ts';
import { describeKafkaSecurity, kafkaConnectionOptions } from './kafka/security.ts';
import { createKafkaSource, type KafkaSource, type KafkaSourceOptions } from './kafka/source.ts';
import { foreignCompanyOf, REMOVE_UNOWNED_COMMAND, unownedCompanyFiles } from './kafka/writer-ownership.ts';
import type { CompanyRebuildResult } from './live-rebuild/company-rebuild.ts';
import { createCompanyRebuilds, type LiveGeneration } from './live-rebuild/company-rebuilds.ts';
import { type CatchUpReporter, createCatchUpReporter } from './observability/catch-up-reporter.ts';
import { createMetrics, type IngestMetrics } from './observability/metrics.ts';
import { type AvroSupport, createAvroSupport } from './schema-registry/index.ts';
import { startDeadLetterPruner } from './upkeep/dead-letter-pruner.ts';
import { startTombstonePruner } from './upkeep/tombstone-pruner.ts';

export interface WorkerDeps {
  readonly logger: Logger;
  /** Column types from the .avsc files (for events without inline schema). */
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  readonly metrics?: IngestMetrics;
  /** Follow generation swaps of INGEST_DATA_DIR (default true; the rebuild builder turns it off). */
  readonly followSwaps?: boolean;
  /** Fail when a data topic is not compacted and lost its oldest events (the rebuild builder). */
  readonly refuseTruncatedTopics?: boolean;
  /** Spans of each apply call (@pda/tracing startTracing, when traces are on; main.ts); default: none. */
  readonly tracer?: Tracer;
}

export interface Worker {
  /** Resolves when stopped (drained and disconnected); rejects on an unrecoverable failure. */
  run(): Promise<void>;
  stop(): void;
  adminPort(): number | undefined;
  /** The Kafka source of the generation being written (lag, connection). */
  source(): KafkaSource | undefined;
  /**
   * Rebuilds one company's file while the others go on (live-rebuild/company-rebuild.ts); one at a time.
   * Resolves when the company is back in service.
   */
  rebuildCompany(companyId: string): Promise<CompanyRebuildResult>;
}

export function createWorker(config: IngestConfig, deps: WorkerDeps): Worker {
  const logger = deps.logger;
  const metrics = deps.metrics ?? createMetrics();
  const stopped = new AbortController();
  let admin: AdminServer | undefined;
  let source: KafkaSource | undefined;
  // Sized once from the descriptor limit (Node raised the soft limit to the hard one at start).
  const companyFiles = processOpenFilesBound(config.maxOpenCompanies, WRITER_DESCRIPTOR_RESERVE);
  // Avro writer schemas by registry id, kept across generations (an id always names one schema).
  const avro = createAvroSupport(config.schemaRegistry, logger, metrics);
  const storage = createStorageState({
    dataDir: () => resolvedDataDir(config.dataDir) ?? config.dataDir,
    logger: logger.child({ component: 'storage' }),
    metrics,
  });
  /** The writer and group of the generation being written (a company rebuild goes through it). */
  let live: LiveGeneration | undefined;
  const rebuilds = createCompanyRebuilds(config, deps, avro, () => live);
  const readiness = readinessReport({
    maxLag: config.readyMaxLag,
    metrics,
    avro,
    storage,
    source: () => source,
    rebuilds,
  });

  /** Runs one generation until stop() or until the data directory resolves elsewhere. */
  async function runGeneration(): Promise<void> {
    const resolved = resolvedDataDir(config.dataDir);
    const groupId = (resolved && readGeneration(resolved)?.groupId) ?? config.kafka.groupId;
    const generation = generationSignal(config.dataDir, deps, resolved, stopped.signal);
    // Grows while apply calls span many companies, so each gets several events per transaction.
    const inFlightBound = createGroupBound(
      config.apply.maxEventsInFlight,
      config.apply.maxEventsInFlightWide,
    );
    const storeOptions = storeOptionsOf(config, resolved ?? config.dataDir, companyFiles.max);
    const sink = openSink(config.apply.thread, storeOptions);
    live = { sink, groupId, signal: generation.signal };
    const pruners = startPruners(config.tombstones, sink, logger);
    try {
      const pipeline = createPipeline({
        decoder: createDecoder({
          topicPrefix: config.kafka.topicPrefix,
          bareDecimalMode: config.decimalMode,
          avscTypes: deps.avscTypes,
          writerSchemas: avro.writerSchemas,
        }),
        sink,
        metrics,
        logger: logger.child({ component: 'apply' }),
        maxGroupEvents: () => Math.max(config.apply.maxGroupEvents, inFlightBound.current()),
        onApplied: (companies) => inFlightBound.observe(companies),
        ...(config.ownership && { foreignCompany: foreignCompanyOf(config.ownership) }),
        ...(deps.tracer && { tracer: deps.tracer }),
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
        {
          groupId,
          dataDir: storeOptions.dataDir,
          kafka: describeKafkaSecurity(config.kafka.security),
          ...(config.ownership && {
            writer: config.ownership.writer,
            ownershipFile: config.ownership.file,
            partitions: config.ownership.partitions,
            appliedPartitions: config.ownership.applied,
          }),
        },
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
      const catchUp = createCatchUpReporter({ logger, metrics, maxLag: config.readyMaxLag });
      const gauges = startKafkaGauges(metrics, () => source, catchUp);
      try {
        admin = await startAdminServer({
          host: config.admin.host,
          port: config.admin.port,
          registry: metrics.registry,
          readiness,
          token: config.admin.token,
          rebuildCompany: rebuilds.request,
          rebuilds: rebuilds.list,
        });
        logStarted(config, logger, admin.port, companyFiles);
        reportUnownedCompanies(config, logger, metrics);
        metrics.openCompanyFilesMax.set(companyFiles.max);
        while (!stopped.signal.aborted) await runGeneration();
        // Drained: a rebuild stops its worker once caught up, and this sample logs 'caught up'.
        catchUp.observe(source?.lag());
        logger.info('ingest stopped: drained and disconnected');
      } finally {
        clearInterval(gauges);
        await admin?.close();
      }
    },
  };
}

/**
 * Ends a generation on stop() or when `rebuild` swapped the data directory (its realpath changed,
 * checked every second unless `followSwaps` is false). `dispose` when the generation is done.
 */
function generationSignal(
  dataDir: string,
  deps: WorkerDeps,
  resolved: string | undefined,
  stopped: AbortSignal,
): { signal: AbortSignal; dispose(): void } {
  const generation = new AbortController();
  const onStop = () => generation.abort();
  stopped.addEventListener('abort', onStop, { once: true });
  const watch = setInterval(() => {
    if (deps.followSwaps !== false && resolved && resolvedDataDir(dataDir) !== resolved) {
      deps.logger.info({ from: resolved, to: resolvedDataDir(dataDir) }, 'data directory swapped');
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
    idleCloseMs: config.idleCloseSeconds * 1000,
    maxStatementsPerFile: config.maxStatementsPerFile,
    ...(config.ownership && {
      ownedPartitions: { partitions: config.ownership.partitions, applied: config.ownership.applied },
    }),
    deadLetters: {
      retentionMs: config.deadLetters.retentionSeconds * 1000,
      maxRows: config.deadLetters.maxRows,
    },
  };
}

/**
 * Exactly one writer: the store lives either in the apply thread or on this thread, where it is
 * opened lazily and closed after a storage fault, so the data directory can be remounted.
 */
function openSink(threaded: boolean, storeOptions: ProjectionStoreOptions): ApplySink {
  return threaded ? createThreadedSink(storeOptions) : inProcessSink(new ReopeningStore(storeOptions));
}

/** Tombstone and dead-letter retention, through the same writer, in steps between batches. */
function startPruners(
  tombstones: IngestConfig['tombstones'],
  sink: ApplySink,
  logger: Logger,
): { stop(): Promise<void> } {
  const tombstonePruner = startTombstonePruner({
    step: (options, cursor) => sink.pruneTombstones(options, cursor),
    retentionMs: tombstones.retentionSeconds * 1000,
    intervalMs: tombstones.pruneIntervalSeconds * 1000,
    logger: logger.child({ component: 'prune' }),
  });
  // Dead-letter retention: the same writer, on the same interval.
  const deadLetters = startDeadLetterPruner({
    step: (maxRows) => sink.pruneDeadLetters(maxRows),
    intervalMs: tombstones.pruneIntervalSeconds * 1000,
    logger: logger.child({ component: 'prune' }),
  });
  return {
    async stop() {
      await tombstonePruner.stop();
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
  const threaded = config.apply.thread;
  return {
    brokers: config.kafka.brokers,
    security: kafkaConnectionOptions(config.kafka.security),
    clientId: config.kafka.clientId,
    groupId,
    topics: dataTopics(config.kafka.topicPrefix),
    fromBeginning: config.kafka.fromBeginning,
    maxBatchEvents: config.apply.maxBatchEvents,
    fetchMaxBytes: config.kafka.fetchMaxBytes,
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    partitionsInFlight: threaded ? config.apply.partitionsInFlight : 1,
    // Without the apply thread each chunk is applied before the next is decoded.
    maxEventsInFlight: threaded ? inFlightBound.current : config.apply.maxBatchEvents,
    refuseTruncatedTopics: deps.refuseTruncatedTopics === true,
    heartbeatTopic: heartbeatTopic(config.kafka.topicPrefix),
    // While the storage is faulted the heartbeat's write fails like the batches: counted there,
    // not logged again every heartbeat.
    onSourceCurrent: (tsMs) =>
      pipeline.markSourceCurrent(tsMs).catch((error: unknown) => {
        if (!storage.failed(error)) throw error;
      }),
    readHeartbeat: avro.readHeartbeat,
    memberFile: memberFilePath(dataDir),
    ...(config.ownership && {
      ownership: { writer: config.ownership, topicPrefix: config.kafka.topicPrefix },
    }),
    durable: createDurabilityBarrier(dataDir),
    logger: deps.logger,
    // A full/read-only/failing disk: one line per fault (batch/storage-state.ts), retried every 2 s.
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
      const { trace } = await pipeline.apply(prepared);
      storage.applied();
      return trace;
    },
  };
}

/** Lag per partition, the connection and the catch-up's progress, as gauges, every second. */
function startKafkaGauges(
  metrics: IngestMetrics,
  source: () => KafkaSource | undefined,
  catchUp: CatchUpReporter,
): NodeJS.Timeout {
  return setInterval(() => {
    const lag = source()?.lag();
    for (const p of lag?.partitions ?? []) {
      metrics.lag.set({ topic: p.topic, partition: String(p.partition) }, p.lag);
    }
    metrics.connected.set(source()?.connected() ? 1 : 0);
    catchUp.observe(lag);
  }, 1000);
}

/**
 * A split writer whose ownership shrank keeps the files of the companies it gave away until the
 * operator removes them (remove-unowned): counted once at start, one warning line, and a gauge.
 */
function reportUnownedCompanies(config: IngestConfig, logger: Logger, metrics: IngestMetrics): void {
  if (!config.ownership) return;
  const dataDir = resolvedDataDir(config.dataDir) ?? config.dataDir;
  const count = unownedCompanyFiles(dataDir, config.ownership).length;
  metrics.companiesNotOwned.set(count);
  if (count > 0)
    logger.warn(
      { count, writer: config.ownership.writer, ownershipFile: config.ownership.file },
      `company files of companies this writer no longer applies stay on disk (not updated, not served by this writer) until removed: stop the writer and run ${REMOVE_UNOWNED_COMMAND}`,
    );
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
        configured: config.maxOpenCompanies,
        used: companyFiles.max,
        openFileLimit: companyFiles.limit,
      },
      'INGEST_MAX_OPEN_COMPANIES needs more file descriptors than the limit allows (3 per file): cut to fit; raise the limit (ulimit -n, LimitNOFILE) to keep more files open',
    );
  }
}
