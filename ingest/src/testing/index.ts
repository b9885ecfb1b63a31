export {
  type EncodedEvent,
  type EncodeOptions,
  type EventInput,
  encodeEvent,
  preciseBase64,
} from './encode-event.ts';
export { sampleRow, uuidFor } from './sample-row.ts';
export { PRIMARY_KEYS, SOURCE_COLUMNS, type SourceColumn } from './source-columns.ts';
