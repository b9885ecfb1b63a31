/**
 * The writer schemas the decoder has, by registry id: filled ahead of decoding by the schema
 * resolver (schema-registry/resolver.ts, which may wait for the registry) and read synchronously by
 * the decoder, so decoding stays a pure function of the record and what was fetched. A schema that
 * cannot be compiled is kept as its error: every record written with it is a dead letter naming why.
 */
import type { Type } from 'avsc';
import {
  changeReaderSchema,
  columnTypesFromAvroRecord,
  compileWriterSchema,
  envelopeRowRecord,
} from './avro-types.ts';
import type { ColumnType } from './column-type.ts';
import { compileRowDecoder, type RowDecoder } from './compile-row-decoder.ts';
import type { ValueOptions } from './decode-value.ts';
import { resolveTypes } from './row-types.ts';
import { incompatibility } from './schema-fit.ts';

type Resolver = ReturnType<Type['createResolver']>;

export class WriterSchema {
  readonly id: number;
  /** The schema as the registry holds it (avsc's `schema()` drops `connect.*` attributes of primitives). */
  readonly json: unknown;
  readonly type: Type;
  /** Column types of the envelope's row record (value schemas) or of the record itself (keys). */
  readonly columns: ReadonlyMap<string, ColumnType>;
  readonly #resolved = new Map<ReadonlyMap<string, ColumnType> | null, Map<string, ColumnType>>();
  readonly #fit = new Map<ReadonlyMap<string, ColumnType>, string | undefined>();
  readonly #decoders = new Map<
    ReadonlyMap<string, ColumnType> | null,
    { readonly options: ValueOptions; readonly decode: RowDecoder }
  >();
  #changeReader: { readonly type: Type; readonly resolver: Resolver } | undefined | null = null;

  constructor(id: number, json: unknown) {
    this.id = id;
    this.json = json;
    this.type = compileWriterSchema(json);
    this.columns = columnTypesFromAvroRecord(envelopeRowRecord(json) ?? json);
  }

  /**
   * The envelope fields a change needs (`after`, `source.lsn`, `source.ts_ms`, `op`, `ts_ms`) read
   * with a reader schema that leaves out the rest (`before`, Debezium's other `source` strings,
   * `transaction`, ...): avsc then skips those bytes instead of building strings nobody reads.
   * undefined for schemas that are not Debezium envelopes (keys, heartbeats): read whole.
   */
  get changeReader(): { readonly type: Type; readonly resolver: Resolver } | undefined {
    if (this.#changeReader === null) {
      let reader: { type: Type; resolver: Resolver } | undefined;
      try {
        const schema = changeReaderSchema(this.json);
        if (schema) {
          const type = compileWriterSchema(schema);
          reader = { type, resolver: type.createResolver(this.type) };
        }
      } catch {
        reader = undefined; // read whole: the slower path is always correct
      }
      this.#changeReader = reader;
    }
    return this.#changeReader;
  }

  /** The writer's types, with the .avsc filling what it cannot say (as for inline JSON schemas). */
  resolvedTypes(avsc: ReadonlyMap<string, ColumnType> | undefined): ReadonlyMap<string, ColumnType> {
    let types = this.#resolved.get(avsc ?? null);
    if (!types) {
      types = resolveTypes(this.columns, avsc);
      this.#resolved.set(avsc ?? null, types);
    }
    return types;
  }

  /** The compiled decoder of this schema's rows (compile-row-decoder.ts), per .avsc and value options. */
  rowDecoder(avsc: ReadonlyMap<string, ColumnType> | undefined, options: ValueOptions): RowDecoder {
    let entry = this.#decoders.get(avsc ?? null);
    if (entry?.options !== options) {
      entry = {
        options,
        decode: compileRowDecoder(this.resolvedTypes(avsc), options, [...this.columns.keys()]),
      };
      this.#decoders.set(avsc ?? null, entry);
    }
    return entry.decode;
  }

  /** Why this row schema cannot feed the table's projection (schema-fit.ts); undefined = it can. */
  misfit(avsc: ReadonlyMap<string, ColumnType>): string | undefined {
    if (!this.#fit.has(avsc)) this.#fit.set(avsc, incompatibility(this.columns, avsc));
    return this.#fit.get(avsc);
  }
}

export type WriterSchemaEntry = WriterSchema | { readonly id: number; readonly error: string };

export class WriterSchemas {
  readonly #byId = new Map<number, WriterSchemaEntry>();

  has(id: number): boolean {
    return this.#byId.has(id);
  }

  get(id: number): WriterSchemaEntry | undefined {
    return this.#byId.get(id);
  }

  /** Compiles the registry's schema text (an Avro schema as JSON); a bad one is kept as its error. */
  add(id: number, schemaText: string): WriterSchemaEntry {
    let entry: WriterSchemaEntry;
    try {
      entry = new WriterSchema(id, JSON.parse(schemaText));
    } catch (error) {
      entry = {
        id,
        error: `writer schema ${id} cannot be compiled: ${String((error as Error).message).slice(0, 200)}`,
      };
    }
    this.#byId.set(id, entry);
    return entry;
  }

  /** A schema the registry has but that can never be used (not Avro): kept as its error. */
  reject(id: number, reason: string): void {
    this.#byId.set(id, { id, error: reason });
  }

  get size(): number {
    return this.#byId.size;
  }
}
