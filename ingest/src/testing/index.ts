// Test and benchmark factories, imported as `@pda/ingest/testing` (package.json exports):
// kept out of the production entry point, so nothing deployed depends on them.

// The Kafka adapter itself, for the e2e tests of its commit rules (test/ingest-durable-commit.e2e.test.ts).
export type { RecordsHandler } from '../kafka/hand-over.ts';
export { createKafkaSource, type KafkaSourceOptions } from '../kafka/source.ts';
export { type AvroTableSchemas, avroEventEncoder, type EncodedAvroEvent } from './encode-avro.ts';
export {
  type EncodedEvent,
  type EncodeOptions,
  type EventInput,
  encodeEvent,
  preciseBase64,
} from './encode-event.ts';
export { sampleRow, uuidFor } from './sample-row.ts';
export { PRIMARY_KEYS, SOURCE_COLUMNS, type SourceColumn } from './source-columns.ts';
