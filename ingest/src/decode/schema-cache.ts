/**
 * JsonConverter with schemas.enable=true repeats the same inline schema (several KB, most of each
 * message) in every record of a topic. The last schema seen per (topic, key|value) is remembered
 * with its exact text prefix `{"schema":<schema>,"payload":`; a record that starts with that very
 * prefix has, byte for byte, the same schema, so only its payload is parsed. Anything else (a new
 * schema version, other formatting) takes the full parse and refreshes the cache: correctness never
 * depends on a hit. Derived column types are cached per schema object (WeakMap).
 */
import { type ColumnType, type ConnectSchema, columnTypesFromConnectStruct } from './column-type.ts';
import { type Unwrapped, unwrap } from './envelope.ts';

interface Entry {
  readonly prefix: string;
  readonly schema: ConnectSchema;
}

export class SchemaCache {
  readonly #entries = new Map<string, Entry>();
  readonly #types = new WeakMap<ConnectSchema, Map<string, ColumnType>>();

  parse(slot: string, text: string, parseJson: (text: string) => unknown): Unwrapped {
    const entry = this.#entries.get(slot);
    if (entry && text.length > entry.prefix.length && text.startsWith(entry.prefix) && text.endsWith('}')) {
      return { payload: parseJson(text.slice(entry.prefix.length, -1)), schema: entry.schema };
    }
    const unwrapped = unwrap(parseJson(text));
    if (unwrapped.schema) {
      const prefix = `{"schema":${JSON.stringify(unwrapped.schema)},"payload":`;
      if (text.startsWith(prefix)) this.#entries.set(slot, { prefix, schema: unwrapped.schema });
    }
    return unwrapped;
  }

  columnTypes(struct: ConnectSchema): Map<string, ColumnType> {
    let types = this.#types.get(struct);
    if (!types) {
      types = columnTypesFromConnectStruct(struct);
      this.#types.set(struct, types);
    }
    return types;
  }
}
