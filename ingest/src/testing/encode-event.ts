/**
 * Builds Debezium PostgreSQL change events in JsonConverter's JSON (with or without inline schema,
 * precise or string decimals) from logical row values (decimal strings, ISO timestamps). Test and
 * benchmark support: the shapes follow the real captured events (test/fixtures/debezium).
 */
import { type SourceTable, TENANT_TABLES } from '@pda/projections/model';
import { PRIMARY_KEYS, SOURCE_COLUMNS, type SourceColumn } from './source-columns.ts';

export interface EncodeOptions {
  readonly topicPrefix?: string;
  readonly inlineSchema?: boolean;
  readonly decimalMode?: 'precise' | 'string';
  /**
   * Tenant tables keyed by (id, company_id), as the partitioned connector's `message.key.columns`
   * makes them (docs/scaling.md): the key, and a delete's before image, carry the company.
   */
  readonly companyKey?: boolean;
}

export interface EventInput {
  readonly table: SourceTable;
  readonly op: 'c' | 'u' | 'r' | 'd';
  /** Logical values: decimals as exact strings, timestamps as ISO strings, arrays as string[]. */
  readonly row: Readonly<Record<string, unknown>>;
  readonly lsn: number;
  readonly tsMs: number;
  readonly txId?: number;
}

export interface EncodedEvent {
  readonly topic: string;
  readonly key: string;
  readonly value: string;
}

/** Exact decimal string → base64 of the big-endian two's-complement unscaled integer. */
export function preciseBase64(decimal: string, scale: number): string {
  const negative = decimal.startsWith('-');
  const [int = '0', frac = ''] = (negative ? decimal.slice(1) : decimal).split('.');
  let unscaled = BigInt(int + frac.padEnd(scale, '0').slice(0, scale));
  if (negative) unscaled = -unscaled;
  let bytes = 1;
  while (unscaled >= 1n << BigInt(bytes * 8 - 1) || unscaled < -(1n << BigInt(bytes * 8 - 1))) bytes++;
  const twos = unscaled < 0n ? (1n << BigInt(bytes * 8)) + unscaled : unscaled;
  return Buffer.from(twos.toString(16).padStart(bytes * 2, '0'), 'hex').toString('base64');
}

function connectField(col: SourceColumn, mode: 'precise' | 'string'): Record<string, unknown> {
  const base = { optional: col.optional ?? false, field: col.name };
  switch (col.kind) {
    case 'uuid':
      return { type: 'string', name: 'io.debezium.data.Uuid', version: 1, ...base };
    case 'int':
      return { type: 'int32', ...base };
    case 'text[]':
      return { type: 'array', items: { type: 'string', optional: true }, ...base };
    case 'timestamptz':
      return { type: 'string', name: 'io.debezium.time.ZonedTimestamp', version: 1, ...base };
    case 'decimal':
      if (mode === 'string') return { type: 'string', ...base };
      return {
        type: 'bytes',
        name: 'org.apache.kafka.connect.data.Decimal',
        version: 1,
        parameters: { scale: String(col.scale), 'connect.decimal.precision': String(col.precision) },
        ...base,
      };
    default:
      return { type: 'string', ...base };
  }
}

function encodeValue(col: SourceColumn, value: unknown, mode: 'precise' | 'string'): unknown {
  if (value === null || value === undefined) return null;
  if (col.kind === 'decimal' && mode === 'precise') return preciseBase64(String(value), col.scale ?? 0);
  return value;
}

export function encodeEvent(input: EventInput, options: EncodeOptions = {}): EncodedEvent {
  const prefix = options.topicPrefix ?? 'pda';
  const mode = options.decimalMode ?? 'precise';
  const columns = SOURCE_COLUMNS[input.table];
  const keyCols: readonly string[] =
    options.companyKey && (TENANT_TABLES as readonly string[]).includes(input.table)
      ? [...PRIMARY_KEYS[input.table], 'company_id']
      : PRIMARY_KEYS[input.table];
  const encodeRow = (keyOnly: boolean) =>
    Object.fromEntries(
      columns.map((c) => [
        c.name,
        keyOnly && !keyCols.includes(c.name) ? null : encodeValue(c, input.row[c.name], mode),
      ]),
    );
  const source = {
    version: '3.2.0.Final',
    connector: 'postgresql',
    name: prefix,
    ts_ms: input.tsMs,
    snapshot: input.op === 'r' ? 'true' : 'false',
    db: 'pda',
    sequence: JSON.stringify([String(input.lsn - 8), String(input.lsn)]),
    schema: 'public',
    table: input.table,
    txId: input.txId ?? 1000,
    lsn: input.lsn,
    xmin: null,
  };
  const payload = {
    before: input.op === 'd' ? encodeRow(true) : null,
    after: input.op === 'd' ? null : encodeRow(false),
    source,
    transaction: null,
    op: input.op,
    ts_ms: input.tsMs + 5,
  };
  const keyPayload = Object.fromEntries(keyCols.map((k) => [k, input.row[k]]));
  const topic = `${prefix}.public.${input.table}`;
  if (!options.inlineSchema)
    return { topic, key: JSON.stringify(keyPayload), value: JSON.stringify(payload) };

  const rowStruct = (field: string) => ({
    type: 'struct',
    fields: columns.map((c) => connectField(c, mode)),
    optional: true,
    name: `${topic}.Value`,
    field,
  });
  const keySchema = {
    type: 'struct',
    fields: columns.filter((c) => keyCols.includes(c.name)).map((c) => connectField(c, mode)),
    optional: false,
    name: `${topic}.Key`,
  };
  const valueSchema = {
    type: 'struct',
    fields: [
      rowStruct('before'),
      rowStruct('after'),
      {
        type: 'struct',
        fields: [],
        optional: false,
        name: 'io.debezium.connector.postgresql.Source',
        field: 'source',
      },
      { type: 'string', optional: false, field: 'op' },
      { type: 'int64', optional: true, field: 'ts_ms' },
    ],
    optional: false,
    name: `${topic}.Envelope`,
    version: 2,
  };
  return {
    topic,
    key: JSON.stringify({ schema: keySchema, payload: keyPayload }),
    value: JSON.stringify({ schema: valueSchema, payload }),
  };
}
