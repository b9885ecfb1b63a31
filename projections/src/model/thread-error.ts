/**
 * Errors crossing a worker thread: ingest's apply thread (ingest/src/apply-thread/) and the api's
 * reader threads (api/src/read-pool/). Structured clone
 * keeps only an Error's message, stack and a built-in name: it drops `code` (SqliteError's
 * SQLITE_BUSY / SQLITE_FULL, ProjectionError's codes), which is what a caller classifies a failure
 * by (retriable vs poison). So the thread sends a plain description and the main thread rebuilds an
 * Error with the same name, message, code, stack and cause chain.
 */

export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly code?: string | number;
  readonly stack?: string;
  readonly cause?: SerializedError;
}

/** Causes followed at most this deep: a cyclic or runaway chain must not grow the message. */
const MAX_CAUSE_DEPTH = 4;

function describe(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

export function serializeError(error: unknown, depth = 0): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: describe(error) };
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(error.stack !== undefined ? { stack: error.stack } : {}),
    ...(cause !== undefined && depth < MAX_CAUSE_DEPTH ? { cause: serializeError(cause, depth + 1) } : {}),
  };
}

/** An Error carrying the thread's name, code and stack (not the main thread's stack). */
export function deserializeError(serialized: SerializedError): Error & { code?: string | number } {
  const error: Error & { code?: string | number } = new Error(
    serialized.message,
    serialized.cause ? { cause: deserializeError(serialized.cause) } : undefined,
  );
  error.name = serialized.name;
  if (serialized.code !== undefined) error.code = serialized.code;
  error.stack = serialized.stack ?? `${serialized.name}: ${serialized.message}`;
  return error;
}
