/**
 * JsonConverter with schemas.enable=true repeats the same inline schema (several KB, most of each
 * message) in every record of a topic. The last schema seen per (topic, key|value) is remembered
 * with its exact prefix `{"schema":<schema>,"payload":` (as text and as UTF-8 bytes); a record that
 * starts with that very prefix has, byte for byte, the same schema, so only its payload is decoded
 * and parsed. Anything else (a new schema version, other formatting) takes the full parse and
 * refreshes the cache: correctness never depends on a hit. Column types are derived once per
 * (schema object, .avsc) pair (WeakMap).
 */
import { type ColumnType, type ConnectSchema, columnTypesFromConnectStruct } from './column-type.ts';
import { type Unwrapped, unwrap } from './envelope.ts';
import { fail } from './errors.ts';
import { resolveTypes } from './row-types.ts';

interface Entry {
  readonly prefix: string;
  readonly prefixBytes: Buffer;
  readonly schema: ConnectSchema;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const CLOSE_BRACE = 0x7d;

export function utf8Text(bytes: Uint8Array | string, what: string): string {
  if (typeof bytes === 'string') return bytes;
  try {
    return utf8.decode(bytes);
  } catch {
    return fail(`${what} is not valid UTF-8`);
  }
}

function startsWithBytes(bytes: Uint8Array, prefix: Buffer): boolean {
  return bytes.length > prefix.length && Buffer.compare(prefix, bytes.subarray(0, prefix.length)) === 0;
}

export class SchemaCache {
  readonly #entries = new Map<string, Entry>();
  /** Resolved types per inline schema (or per .avsc alone for bare payloads), then per .avsc. */
  readonly #resolved = new WeakMap<
    object,
    Map<ReadonlyMap<string, ColumnType> | null, Map<string, ColumnType>>
  >();

  parse(
    slot: string,
    raw: Uint8Array | string,
    what: string,
    parseJson: (text: string) => unknown,
  ): Unwrapped {
    const entry = this.#entries.get(slot);
    if (entry) {
      if (typeof raw === 'string') {
        if (raw.length > entry.prefix.length && raw.startsWith(entry.prefix) && raw.endsWith('}')) {
          return { payload: parseJson(raw.slice(entry.prefix.length, -1)), schema: entry.schema };
        }
      } else if (startsWithBytes(raw, entry.prefixBytes) && lastNonSpace(raw) === CLOSE_BRACE) {
        const payloadBytes = raw.subarray(entry.prefixBytes.length, lastNonSpaceIndex(raw));
        return { payload: parseJson(utf8Text(payloadBytes, what)), schema: entry.schema };
      }
    }
    const text = utf8Text(raw, what);
    const unwrapped = unwrap(parseJson(text));
    if (unwrapped.schema) {
      const prefix = `{"schema":${JSON.stringify(unwrapped.schema)},"payload":`;
      if (text.startsWith(prefix)) {
        this.#entries.set(slot, {
          prefix,
          prefixBytes: Buffer.from(prefix, 'utf8'),
          schema: unwrapped.schema,
        });
      }
    }
    return unwrapped;
  }

  /**
   * Column types of a row from its inline struct schema and the table's .avsc types, merged once
   * per (schema, .avsc) pair (resolveTypes); undefined when there is neither.
   */
  resolvedTypes(
    struct: ConnectSchema | undefined,
    avsc: ReadonlyMap<string, ColumnType> | undefined,
  ): ReadonlyMap<string, ColumnType> | undefined {
    const owner: object | undefined = struct ?? avsc;
    if (!owner) return undefined;
    let byAvsc = this.#resolved.get(owner);
    if (!byAvsc) {
      byAvsc = new Map();
      this.#resolved.set(owner, byAvsc);
    }
    let types = byAvsc.get(avsc ?? null);
    if (!types) {
      types = resolveTypes(struct ? columnTypesFromConnectStruct(struct) : undefined, avsc);
      byAvsc.set(avsc ?? null, types);
    }
    return types;
  }
}

function lastNonSpaceIndex(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  while (i >= 0 && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i--;
  return i;
}

function lastNonSpace(bytes: Uint8Array): number | undefined {
  return bytes[lastNonSpaceIndex(bytes)];
}
