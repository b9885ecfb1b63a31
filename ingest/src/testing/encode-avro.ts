/**
 * Builds Debezium PostgreSQL change events as the registry's Avro converter writes them (Confluent
 * wire format: magic 0, 4-byte writer schema id, Avro datum) from the same logical inputs as
 * encode-event.ts, with REAL writer schemas (e.g. test/fixtures/debezium-avro/schemas.json,
 * registered under the caller's subjects). Test and benchmark support.
 */
import type { SourceTable } from '@pda/projections/model';
import type { Type } from 'avsc';
import { columnTypesFromAvroRecord, compileWriterSchema, envelopeRowRecord } from '../decode/avro-types.ts';
import type { ColumnType } from '../decode/column-type.ts';
import type { EventInput } from './encode-event.ts';
import { preciseBase64 } from './encode-event.ts';
import { PRIMARY_KEYS } from './source-columns.ts';

export interface AvroTableSchemas {
  readonly keyId: number;
  readonly key: unknown;
  readonly valueId: number;
  readonly value: unknown;
}

export interface EncodedAvroEvent {
  readonly topic: string;
  readonly key: Buffer;
  readonly value: Buffer;
}

interface Compiled {
  readonly keyType: Type;
  readonly valueType: Type;
  readonly keyHeader: Buffer;
  readonly valueHeader: Buffer;
  readonly columns: ReadonlyMap<string, ColumnType>;
}

const header = (id: number) => {
  const bytes = Buffer.alloc(5);
  bytes.writeUInt32BE(id, 1);
  return bytes;
};

function avroValue(value: unknown, type: ColumnType | undefined): unknown {
  // undefined: avsc writes the field's default (Debezium's schemas carry the column defaults).
  if (value === null || value === undefined) return value;
  if (type?.kind === 'decimal') return Buffer.from(preciseBase64(String(value), type.scale ?? 0), 'base64');
  return value;
}

export function avroEventEncoder(
  schemas: (table: SourceTable) => AvroTableSchemas,
  options: { readonly topicPrefix: string },
): (input: EventInput) => EncodedAvroEvent {
  const compiled = new Map<SourceTable, Compiled>();
  const compile = (table: SourceTable): Compiled => {
    let c = compiled.get(table);
    if (!c) {
      const s = schemas(table);
      c = {
        keyType: compileWriterSchema(s.key),
        valueType: compileWriterSchema(s.value),
        keyHeader: header(s.keyId),
        valueHeader: header(s.valueId),
        columns: columnTypesFromAvroRecord(envelopeRowRecord(s.value)),
      };
      compiled.set(table, c);
    }
    return c;
  };
  return (input) => {
    const c = compile(input.table);
    const keyCols = PRIMARY_KEYS[input.table];
    const row = (keyOnly: boolean) => {
      const out: Record<string, unknown> = {};
      for (const [name, type] of c.columns) {
        out[name] = keyOnly && !keyCols.includes(name) ? null : avroValue(input.row[name], type);
      }
      return out;
    };
    const source = {
      version: '3.4.3.Final',
      connector: 'postgresql',
      name: options.topicPrefix,
      ts_ms: input.tsMs,
      snapshot: input.op === 'r' ? 'true' : 'false',
      db: 'pda',
      sequence: JSON.stringify([String(input.lsn - 8), String(input.lsn)]),
      ts_us: input.tsMs * 1000,
      ts_ns: null,
      schema: 'public',
      table: input.table,
      txId: input.txId ?? 1000,
      lsn: input.lsn,
      xmin: null,
    };
    const value = {
      before: input.op === 'd' ? row(true) : null,
      after: input.op === 'd' ? null : row(false),
      source,
      transaction: null,
      op: input.op,
      ts_ms: input.tsMs + 5,
      ts_us: (input.tsMs + 5) * 1000,
      ts_ns: null,
    };
    const key = Object.fromEntries(keyCols.map((k) => [k, input.row[k]]));
    return {
      topic: `${options.topicPrefix}.public.${input.table}`,
      key: Buffer.concat([c.keyHeader, c.keyType.toBuffer(key)]),
      value: Buffer.concat([c.valueHeader, c.valueType.toBuffer(value)]),
    };
  };
}
