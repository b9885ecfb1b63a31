/**
 * Captured records as JSON lines: {topic, partition, offset, key, value}. key/value are either the
 * Kafka message text (a string, exact) or its parsed JSON (an object, re-serialised; integers
 * beyond 2^53 were already rounded by whoever parsed them), or null (tombstone / no key).
 * Binary records (Avro in the schema-registry wire format) come as `keyBase64`/`valueBase64`
 * instead (test/fixtures/debezium-avro/README.md).
 * A line that is not such a record becomes a dead letter like any undecodable message.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { RawRecord } from '../decode/index.ts';

export type ReplayLine =
  | { readonly record: RawRecord; readonly lineNo: number }
  | { readonly invalid: string; readonly line: number };

function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function parseReplayLine(text: string, lineNo: number): ReplayLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { invalid: 'replay line is not valid JSON', line: lineNo };
  }
  const r = parsed as Record<string, unknown> | null;
  if (typeof r !== 'object' || r === null || typeof r.topic !== 'string') {
    return { invalid: 'replay line has no topic', line: lineNo };
  }
  const partition = typeof r.partition === 'number' ? r.partition : 0;
  const offset =
    typeof r.offset === 'string' || typeof r.offset === 'number' ? String(r.offset) : String(lineNo);
  const bytes = (b64: unknown) => (typeof b64 === 'string' ? Buffer.from(b64, 'base64') : undefined);
  const key = bytes(r.keyBase64) ?? asText(r.key);
  const value = bytes(r.valueBase64) ?? asText(r.value);
  return { record: { topic: r.topic, partition, offset, key, value }, lineNo };
}

/** Streams a JSONL file in chunks of at most `chunkSize` lines (blank lines skipped). */
export async function* readReplayFile(path: string, chunkSize: number): AsyncGenerator<ReplayLine[]> {
  const lines = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let chunk: ReplayLine[] = [];
  let lineNo = 0;
  for await (const text of lines) {
    lineNo++;
    if (text.trim() === '') continue;
    chunk.push(parseReplayLine(text, lineNo));
    if (chunk.length >= chunkSize) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}
