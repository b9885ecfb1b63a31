import { deserializeError, ProjectionError, serializeError } from '@pda/projections/model';
import { ApiError } from '../errors/api-error.ts';
import type { WireError } from './reader-protocol.ts';

/**
 * Errors of a reader thread, sent as plain data and rebuilt on the event loop as the class the
 * error handler maps (errors/to-api-error.ts): an ApiError keeps its code and headers, a
 * ProjectionError its code (out of service, missing, too new: 503), any other error its name,
 * message, `code` and causes (serializeError, shared with ingest's apply thread) — SQLite's codes,
 * by which a damaged file or an I/O error is told (a 503, not a 500). Structured clone alone would
 * keep only the message.
 */
export function toWire(error: unknown): WireError {
  if (error instanceof ApiError) {
    return {
      kind: 'api',
      code: error.code,
      detail: error.message,
      errors: error.errors,
      headers: error.headers,
    };
  }
  if (error instanceof ProjectionError)
    return { kind: 'projection', code: error.code, message: error.message };
  return { kind: 'error', ...serializeError(error) };
}

export function fromWire(wire: WireError): Error {
  switch (wire.kind) {
    case 'api': {
      const options = {
        ...(wire.errors && { errors: wire.errors }),
        ...(wire.headers && { headers: { ...wire.headers } }),
      };
      return new ApiError(wire.code, wire.detail, options);
    }
    case 'projection':
      return new ProjectionError(wire.code, wire.message);
    case 'error':
      return deserializeError(wire);
  }
}
