/**
 * The ingest worker's lifecycle (notes/style.md: worker.ts builds, main.ts parses config and
 * starts): open the projections, serve the admin port, consume Kafka through the shared
 * decode → apply pipeline until the AbortSignal fires, then drain, commit and close.
 */
import { ProjectionStore, type SourceTable } from '@pda/projections';
import type { Logger } from 'pino';
import { createPipeline } from './apply/pipeline.ts';
import type { IngestConfig } from './config.ts';
import { type ColumnType, createDecoder, dataTopics } from './decode/index.ts';
import { createKafkaSource, type KafkaSource } from './kafka/source.ts';
import { type AdminServer, startAdminServer } from './ops/admin-server.ts';
import { createMetrics, type IngestMetrics } from './ops/metrics.ts';

export interface WorkerDeps {
  readonly logger: Logger;
  /** Column types from the .avsc files (for events without inline schema). */
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  readonly metrics?: IngestMetrics;
  /** Called after every committed chunk (the rebuild command watches catch-up with it). */
  readonly onBatch?: (source: KafkaSource) => void;
}

export interface Worker {
  /** Resolves when stopped (drained and disconnected); rejects on an unrecoverable failure. */
  run(): Promise<void>;
  stop(): void;
  readonly signal: AbortSignal;
  adminPort(): number | undefined;
  source(): KafkaSource;
}

export function createWorker(config: IngestConfig, deps: WorkerDeps): Worker {
  const logger = deps.logger;
  const metrics = deps.metrics ?? createMetrics();
  const controller = new AbortController();
  const source = createKafkaSource({
    brokers: config.INGEST_KAFKA_BROKERS,
    clientId: config.INGEST_CLIENT_ID,
    groupId: config.INGEST_GROUP_ID,
    topics: dataTopics(config.INGEST_TOPIC_PREFIX),
    fromBeginning: config.INGEST_FROM_BEGINNING,
    maxBatchEvents: config.INGEST_MAX_BATCH_EVENTS,
    fetchMaxBytes: config.INGEST_FETCH_MAX_BYTES,
    sessionTimeoutMs: config.INGEST_SESSION_TIMEOUT_MS,
    logger,
  });
  let admin: AdminServer | undefined;

  const readiness = () => {
    const lag = source.lag();
    const connected = source.connected();
    const ready = connected && lag.measured && lag.total <= config.INGEST_READY_MAX_LAG;
    return {
      ready,
      detail: { connected, lag: lag.measured ? lag.total : null, max_lag: config.INGEST_READY_MAX_LAG },
    };
  };

  return {
    signal: controller.signal,
    adminPort: () => admin?.port,
    source: () => source,
    stop: () => controller.abort(),
    async run() {
      const store = ProjectionStore.open({
        dataDir: config.INGEST_DATA_DIR,
        maxOpenCompanies: config.INGEST_MAX_OPEN_COMPANIES,
      });
      const decoder = createDecoder({
        topicPrefix: config.INGEST_TOPIC_PREFIX,
        bareDecimalMode: config.INGEST_DECIMAL_MODE,
        avscTypes: deps.avscTypes,
      });
      const pipeline = createPipeline({
        decoder,
        sink: store,
        metrics,
        logger: logger.child({ component: 'apply' }),
      });
      const lagTimer = setInterval(() => {
        for (const p of source.lag().partitions)
          metrics.lag.set({ topic: p.topic, partition: String(p.partition) }, p.lag);
        metrics.connected.set(source.connected() ? 1 : 0);
      }, 1000);
      try {
        admin = await startAdminServer({
          host: config.INGEST_ADMIN_HOST,
          port: config.INGEST_ADMIN_PORT,
          registry: metrics.registry,
          readiness,
        });
        logger.info(
          { adminPort: admin.port, groupId: config.INGEST_GROUP_ID, dataDir: config.INGEST_DATA_DIR },
          'ingest started',
        );
        await source.run((records) => {
          pipeline.process(records);
          deps.onBatch?.(source);
        }, controller.signal);
        logger.info('ingest stopped: drained and disconnected');
      } finally {
        clearInterval(lagTimer);
        await admin?.close();
        store.close();
      }
    },
  };
}
