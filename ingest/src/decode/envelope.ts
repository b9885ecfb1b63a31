/**
 * The Debezium envelope, with or without JsonConverter's inline schema ({schema, payload}).
 * Only structure is checked here; column values are decoded in row-types.ts (compile-row-decoder.ts).
 */
import type { ConnectSchema } from './column-type.ts';
import { fail } from './errors.ts';

export interface Unwrapped {
  readonly payload: unknown;
  readonly schema: ConnectSchema | undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JsonConverter with schemas.enable=true writes exactly {schema, payload}; otherwise the bare value. */
export function unwrap(parsed: unknown): Unwrapped {
  if (isObject(parsed) && 'payload' in parsed && 'schema' in parsed && Object.keys(parsed).length === 2) {
    const schema = isObject(parsed.schema) ? (parsed.schema as ConnectSchema) : undefined;
    return { payload: parsed.payload, schema };
  }
  return { payload: parsed, schema: undefined };
}

export interface Envelope {
  readonly op: string;
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
  readonly source: Record<string, unknown>;
  readonly tsMs: number | undefined;
  /** Inline schemas of `after` (or `before`) rows, when present. */
  readonly rowSchema: ConnectSchema | undefined;
}

function rowOrNull(value: unknown, name: string): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  if (!isObject(value)) fail(`envelope '${name}' is not an object`);
  return value;
}

export function readEnvelope(payload: unknown, schema: ConnectSchema | undefined): Envelope {
  if (!isObject(payload)) fail('value is not a JSON object (expected a Debezium envelope)');
  const { op, source } = payload;
  if (typeof op !== 'string') fail("envelope has no 'op' (not a Debezium change event)");
  if (!isObject(source)) fail("envelope has no 'source' block");
  const fields = schema?.fields ?? [];
  const rowSchema =
    fields.find((f) => f.field === 'after' && f.type === 'struct') ??
    fields.find((f) => f.field === 'before' && f.type === 'struct');
  const tsMs = typeof payload.ts_ms === 'number' ? payload.ts_ms : undefined;
  return {
    op,
    before: rowOrNull(payload.before, 'before'),
    after: rowOrNull(payload.after, 'after'),
    source,
    tsMs,
    rowSchema,
  };
}

export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!isObject(value)) fail(`${what} is not a JSON object`);
  return value;
}
