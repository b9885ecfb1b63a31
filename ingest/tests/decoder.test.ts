import { SOURCE_TABLES, type SourceTable } from '@pda/projections/model';
import { describe, expect, it } from 'vitest';
import { columnTypesFromAvsc, createDecoder, type DecodeResult } from '../src/decode/index.ts';
import { isoFromZonedString } from '../src/decode/time.ts';
import { encodeEvent, PRIMARY_KEYS, SOURCE_COLUMNS, sampleRow, uuidFor } from '../src/testing/index.ts';

// Stand-in .avsc derived from the same column list (the real files are checked in avsc.test.ts).
const avscFor = (table: SourceTable) =>
  columnTypesFromAvsc({
    type: 'record',
    fields: SOURCE_COLUMNS[table].map((c) => ({
      name: c.name,
      type:
        c.kind === 'decimal'
          ? { type: 'bytes', logicalType: 'decimal', precision: c.precision, scale: c.scale }
          : c.kind === 'timestamptz'
            ? { type: 'string', 'connect.name': 'io.debezium.time.ZonedTimestamp' }
            : c.kind === 'int'
              ? 'int'
              : c.kind === 'uuid'
                ? { type: 'string', logicalType: 'uuid' }
                : c.kind === 'text[]'
                  ? { type: 'array', items: 'string' }
                  : 'string',
    })),
  });

const decode = createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: avscFor });
const decodeStringMode = createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'string', avscTypes: avscFor });
const company = uuidFor(1, 99);

function record(topic: string, key: string | null, value: string | null) {
  return { topic, partition: 0, offset: '7', key, value };
}

/** What the decoder must produce for a logical row: timestamps normalised to 6 digits. */
function expectedRow(table: SourceTable, row: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const c of SOURCE_COLUMNS[table]) {
    const v = row[c.name];
    out[c.name] = c.kind === 'timestamptz' && typeof v === 'string' ? isoFromZonedString(v) : v;
  }
  return out;
}

const forms = [
  { name: 'inline schema, precise', inlineSchema: true, decimalMode: 'precise', decoder: decode },
  { name: 'inline schema, string', inlineSchema: true, decimalMode: 'string', decoder: decode },
  {
    name: 'bare payload, precise (.avsc scale)',
    inlineSchema: false,
    decimalMode: 'precise',
    decoder: decode,
  },
  { name: 'bare payload, string', inlineSchema: false, decimalMode: 'string', decoder: decodeStringMode },
] as const;

describe.each(forms)('$name', ({ inlineSchema, decimalMode, decoder }) => {
  const cases = SOURCE_TABLES.flatMap((table) =>
    (['c', 'u', 'r', 'd'] as const).map((op, i) => ({ table, op, n: 3 + i * 11 + table.length })),
  );
  it.each(cases)('$table op $op', ({ table, op, n }) => {
    const row = sampleRow(table, n, company);
    const ev = encodeEvent(
      { table, op, row, lsn: 1000 + n, tsMs: 1_700_000_000_000 + n },
      { inlineSchema, decimalMode },
    );
    const result = decoder(record(ev.topic, ev.key, ev.value));
    const key = Object.fromEntries(PRIMARY_KEYS[table].map((k) => [k, row[k]]));
    const position = { lsn: 1000 + n, tsMs: 1_700_000_000_000 + n };
    const origin = { topic: ev.topic, partition: 0, offset: '7' };
    if (op === 'd') {
      expect(result).toEqual({ type: 'change', change: { kind: 'delete', table, key, position, origin } });
    } else {
      expect(result).toEqual({
        type: 'change',
        change: {
          kind: 'upsert',
          op,
          table,
          key,
          row: expectedRow(table, row),
          unavailable: [],
          position,
          origin,
        },
      });
    }
  });
});

describe('deliberately ignored', () => {
  it.each<[string, ReturnType<typeof record>, DecodeResult]>([
    ['tombstone', record('pda.public.sites', '{"id":"x"}', null), { type: 'ignored', reason: 'tombstone' }],
    [
      'heartbeat',
      record('__debezium-heartbeat.pda', '{"serverName":"pda"}', '{"ts_ms":1}'),
      { type: 'ignored', reason: 'heartbeat' },
    ],
    [
      'transaction',
      record('pda.transaction', null, '{"status":"BEGIN"}'),
      { type: 'ignored', reason: 'transaction' },
    ],
    [
      'other table',
      record('pda.public.audit_log', null, '{}'),
      { type: 'ignored', reason: 'uncaptured-table' },
    ],
  ])('%s', (_name, input, expected) => {
    expect(decode(input)).toEqual(expected);
  });
});

describe('special events', () => {
  it('truncate has no key', () => {
    const value = JSON.stringify({
      before: null,
      after: null,
      op: 't',
      source: { lsn: 42, ts_ms: 5 },
      ts_ms: 6,
    });
    expect(decode(record('pda.public.services', null, value))).toEqual({
      type: 'change',
      change: {
        kind: 'truncate',
        table: 'services',
        position: { lsn: 42, tsMs: 5 },
        origin: { topic: 'pda.public.services', partition: 0, offset: '7' },
      },
    });
  });

  it('unavailable (unchanged TOAST) values are listed and absent from the row', () => {
    const row = { ...sampleRow('sites', 4, company), notes: '__debezium_unavailable_value' };
    const ev = encodeEvent({ table: 'sites', op: 'u', row, lsn: 9, tsMs: 1 }, { inlineSchema: true });
    const result = decode(record(ev.topic, ev.key, ev.value));
    expect(result.type).toBe('change');
    const change = result.type === 'change' ? result.change : undefined;
    expect(change?.kind === 'upsert' && change.unavailable).toEqual(['notes']);
    expect(change?.kind === 'upsert' && 'notes' in change.row).toBe(false);
  });

  it('NanoTimestamp beyond 2^53 is re-parsed exactly', () => {
    const value = `{"schema":{"type":"struct","fields":[{"type":"struct","field":"after","fields":[
      {"type":"string","field":"id"},{"type":"int64","name":"io.debezium.time.NanoTimestamp","field":"seen"}]}]},
      "payload":{"before":null,"after":{"id":"0b0e0c1a-1111-4222-8333-444455556666","seen":1706702400123456789},"op":"c","source":{"lsn":5,"ts_ms":1}}}`;
    const result = decode(
      record('pda.public.companies', '{"id":"0b0e0c1a-1111-4222-8333-444455556666"}', value),
    );
    expect(result.type === 'change' && result.change.kind === 'upsert' && result.change.row.seen).toBe(
      '2024-01-31T12:00:00.123456Z',
    );
  });

  it('incremental snapshot read without an LSN gets position 0 (fills, never overwrites)', () => {
    const value = JSON.stringify({
      after: { id: '0b0e0c1a-1111-4222-8333-444455556666', name: 'n' },
      op: 'r',
      source: { ts_ms: 3 },
    });
    const result = decode(
      record('pda.public.companies', '{"id":"0b0e0c1a-1111-4222-8333-444455556666"}', value),
    );
    expect(result.type === 'change' && result.change.position).toEqual({ lsn: 0, tsMs: 3 });
  });
});

describe('malformed → dead letter with a reason', () => {
  const ok = encodeEvent({
    table: 'services',
    op: 'c',
    row: sampleRow('services', 1, company),
    lsn: 5,
    tsMs: 1,
  });
  const payload = JSON.parse(ok.value);
  const withAfter = (patch: Record<string, unknown>) =>
    JSON.stringify({ ...payload, after: { ...payload.after, ...patch } });
  it.each([
    ['not JSON', ok.key, '{"op":', /not valid JSON/],
    ['not UTF-8', ok.key, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /UTF-8/],
    ['empty value', ok.key, '', /empty value/],
    ['array value', ok.key, '[1,2]', /not a JSON object/],
    ['no op', ok.key, JSON.stringify({ ...payload, op: undefined }), /no 'op'/],
    ['unknown op', ok.key, JSON.stringify({ ...payload, op: 'x' }), /unknown op/],
    ['no source', ok.key, JSON.stringify({ ...payload, source: undefined }), /source/],
    ['no lsn', ok.key, JSON.stringify({ ...payload, source: { ts_ms: 1 } }), /lsn/],
    ['no key', null, ok.value, /without a message key/],
    ['key not JSON', 'id=1', ok.value, /key is not valid JSON/],
    ['bad base64 money', ok.key, withAfter({ client_rate_amount: '$$$' }), /client_rate_amount.*base64/],
    ['bad uuid', ok.key, withAfter({ company_id: 'nope' }), /company_id.*uuid/],
    ['bad timestamp', ok.key, withAfter({ created_at: '2024-13-01T00:00:00Z' }), /created_at/],
    ['object in text column', ok.key, withAfter({ name: { a: 1 } }), /name.*unexpected object/],
    ['create without after', ok.key, JSON.stringify({ ...payload, after: null }), /without 'after'/],
  ])('%s', (_name, key, value, reason) => {
    const result = decode({ topic: ok.topic, partition: 0, offset: '1', key, value });
    expect(result.type).toBe('dead-letter');
    expect(result.type === 'dead-letter' && result.reason).toMatch(reason);
  });
});

describe('inline schema cache', () => {
  it('a changed schema on the same topic is parsed afresh (no stale column types)', () => {
    const row = sampleRow('services', 2, company);
    const first = encodeEvent({ table: 'services', op: 'c', row, lsn: 1, tsMs: 1 }, { inlineSchema: true });
    expect(decode(record(first.topic, first.key, first.value)).type).toBe('change');
    // Same topic, schema now says string-mode decimals: the value must follow the new schema.
    const second = encodeEvent(
      { table: 'services', op: 'c', row, lsn: 2, tsMs: 1 },
      { inlineSchema: true, decimalMode: 'string' },
    );
    const result = decode(record(second.topic, second.key, second.value));
    expect(
      result.type === 'change' && result.change.kind === 'upsert' && result.change.row.client_rate_amount,
    ).toBe(row.client_rate_amount);
    // And back: a cached prefix followed by a different payload shape is still decoded exactly.
    const third = decode(record(first.topic, first.key, first.value));
    expect(
      third.type === 'change' && third.change.kind === 'upsert' && third.change.row.client_rate_amount,
    ).toBe(row.client_rate_amount);
  });
});

describe('raw bytes (as kafkajs delivers them) decode like text, on cache miss and hit', () => {
  it.each(SOURCE_TABLES)('%s', (table) => {
    const bytesDecoder = createDecoder({
      topicPrefix: 'pda',
      bareDecimalMode: 'precise',
      avscTypes: avscFor,
    });
    for (let n = 1; n <= 3; n++) {
      const ev = encodeEvent(
        { table, op: 'u', row: sampleRow(table, n, company), lsn: n, tsMs: 1 },
        { inlineSchema: true },
      );
      const fromText = decode(record(ev.topic, ev.key, ev.value));
      const fromBytes = bytesDecoder({
        topic: ev.topic,
        partition: 0,
        offset: '7',
        key: Buffer.from(ev.key),
        value: Buffer.from(`${ev.value}\n`),
      });
      expect(fromBytes).toEqual(fromText);
      expect(fromBytes.type).toBe('change');
    }
  });

  it('invalid UTF-8 in a cached payload is still a dead letter', () => {
    const bytesDecoder = createDecoder({
      topicPrefix: 'pda',
      bareDecimalMode: 'precise',
      avscTypes: avscFor,
    });
    const ev = encodeEvent(
      { table: 'companies', op: 'c', row: sampleRow('companies', 1, company), lsn: 1, tsMs: 1 },
      { inlineSchema: true },
    );
    expect(bytesDecoder(record(ev.topic, ev.key, ev.value)).type).toBe('change');
    const at = ev.value.lastIndexOf('"name":"') + 8; // in the payload, after the cached schema prefix
    const bad = Buffer.from(`${ev.value.slice(0, at)}\u00e9${ev.value.slice(at)}`);
    bad[bad.indexOf(Buffer.from('\u00e9')) + 1] = 0xff; // broken continuation byte
    const result = bytesDecoder({ topic: ev.topic, partition: 0, offset: '8', key: ev.key, value: bad });
    expect(result).toMatchObject({ type: 'dead-letter', reason: expect.stringMatching(/UTF-8/) });
  });
});
