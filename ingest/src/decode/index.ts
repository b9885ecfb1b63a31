export { columnTypesFromAvsc } from './avsc-column-types.ts';
export type { ColumnType } from './column-type.ts';
export { UNAVAILABLE_PLACEHOLDER } from './decode-row.ts';
export { createDecoder, type Decoder, type DecoderOptions } from './decoder.ts';
export { heartbeatTopic, heartbeatTsMs } from './heartbeat.ts';
export { classifyTopic, dataTopics } from './topic.ts';
export type { DecodeResult, IgnoredReason, RawRecord } from './types.ts';
