/**
 * JSON parsing for Debezium messages. `JSON.parse` is used first (fast, native); it rounds integers
 * beyond 2^53 (int64 columns, NanoTimestamp, MicroTimestamp after year 2255). When the decoder meets
 * such a value in a column where it matters it throws `UnsafeIntegerError`, and the message is
 * parsed again with lossless-json, keeping those integers as BigInt (rare, so the slow parser
 * costs nothing on the common path).
 */
import { isInteger, isSafeNumber, parse } from 'lossless-json';

export class UnsafeIntegerError extends Error {
  override readonly name = 'UnsafeIntegerError';
}

export function parseFast(text: string): unknown {
  return JSON.parse(text);
}

export function parseExact(text: string): unknown {
  return parse(text, null, (n) => (isInteger(n) && !isSafeNumber(n) ? BigInt(n) : Number(n)));
}
