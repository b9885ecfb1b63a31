// @pda/ingest: the worker deployable. Public surface for tests, the benchmark and the test harness.

export { type ApplySink, inProcessSink, type SynchronousWriter } from './apply-thread/sink.ts';
export { type BatchSummary, createPipeline, type Pipeline } from './batch/pipeline.ts';
export { ConfigError, type IngestConfig, parseConfig } from './config.ts';
export * from './decode/index.ts';
export { type GenerationInfo, readGeneration, resolvedDataDir } from './generations.ts';
export { DATA_TOPIC_CONFIG_ENTRIES } from './kafka/data-topics.ts';
// Other kafkajs consumers of the CDC topics (tests, benchmarks) need the codecs the connector may write with.
export { registerCodecs as registerKafkajsCodecs } from './kafka/kafkajs/codecs.ts';
export { memberFilePath, readRecordedMember } from './kafka/predecessor.ts';
export { createLogger } from './logger.ts';
export { createMetrics, type IngestMetrics } from './observability/metrics.ts';
export { type RebuildDeps, RebuildError, rebuild } from './offline-rebuild/rebuild.ts';
export { parseReplayLine } from './replay/read-jsonl.ts';
export { ReplayError, type ReplayOptions, type ReplayTotals, replayFile } from './replay/replay.ts';
export {
  type AvroSupport,
  createAvroSupport,
  createSchemaRegistryClient,
  createSchemaResolver,
  SchemaFetchError,
  type SchemaRegistryClient,
  type SchemaResolver,
} from './schema-registry/index.ts';
export { type AvscTypes, loadAvscTypes } from './schema-types.ts';
export { createWorker, type Worker, type WorkerDeps } from './worker.ts';
