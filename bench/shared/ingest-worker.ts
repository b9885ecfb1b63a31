/** The ingest worker as the benchmarks run it: in this process, on the running stack's Kafka. */
import {
  type AvscTypes,
  createLogger,
  createMetrics,
  createWorker,
  parseConfig,
  type WorkerDeps,
} from '@pda/ingest';
import pino from 'pino';
import { kafkaBrokers, readStackEnv } from './stack-env.ts';

export interface BenchWorkerOptions {
  readonly groupId: string;
  readonly topicPrefix: string;
  readonly dataDir: string;
  readonly avscTypes: AvscTypes;
  /** More INGEST_* variables (the benchmark's tuning flags). */
  readonly env?: Readonly<Record<string, string>>;
  /** Spans of each apply call (@pda/tracing startTracing: pipeline/tracing-cost.ts, freshness.ts); default: none. */
  readonly tracer?: WorkerDeps['tracer'];
}

export type BenchWorkerMetrics = ReturnType<typeof createMetrics>;

/** The INGEST_* variables of a benchmark worker: a new group into `dataDir`, admin port 0, warnings only. */
export function benchWorkerEnv(options: Pick<BenchWorkerOptions, 'groupId' | 'topicPrefix' | 'dataDir'>) {
  const registry = process.env.PDA_SCHEMA_REGISTRY_URL ?? readStackEnv().PDA_SCHEMA_REGISTRY_URL;
  return {
    INGEST_KAFKA_BROKERS: kafkaBrokers().join(','),
    INGEST_GROUP_ID: options.groupId,
    INGEST_TOPIC_PREFIX: options.topicPrefix,
    INGEST_DATA_DIR: options.dataDir,
    INGEST_ADMIN_PORT: '0',
    INGEST_LOG_LEVEL: 'warn',
    // The shipped connector writes Avro: the stack's registry, for the topics it wrote.
    ...(registry ? { INGEST_SCHEMA_REGISTRY_URL: registry } : {}),
  };
}

/** A worker from a new group into `dataDir`; admin port 0, warnings only; its metrics to read. */
export function benchWorker(options: BenchWorkerOptions) {
  const metrics = createMetrics();
  const worker = createWorker(parseConfig({ ...benchWorkerEnv(options), ...options.env }), {
    // stderr: the benchmarks print their JSON document on stdout.
    logger: createLogger('warn', 'ingest', pino.destination(2)),
    avscTypes: options.avscTypes,
    metrics,
    ...(options.tracer && { tracer: options.tracer }),
  });
  return { worker, metrics };
}
