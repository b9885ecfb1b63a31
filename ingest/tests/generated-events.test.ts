/**
 * Generated events: random rows from the real .avsc files (avsc `Type.random()`, which yields
 * timestamps with 0–9 fractional digits and exact decimal strings), encoded in Debezium's JSON
 * forms (inline schema or bare payload × precise or string decimals), decoded and applied.
 */

import { SOURCE_TABLES, type SourceTable } from '@pda/projections/model';
import { loadTableSchema } from '@pda/schemas';
import { describe, expect, it } from 'vitest';
import { columnTypesFromAvsc, createDecoder, type RawRecord } from '../src/decode/index.ts';
import { encodeEvent, SOURCE_COLUMNS, uuidFor } from '../src/testing/index.ts';
import { applyRecords, tempDataDir } from './support/apply.ts';
import { dumpDataDir } from './support/dump.ts';

const avscTypes = (table: SourceTable) => columnTypesFromAvsc(loadTableSchema(table));
const COMPANIES = [uuidFor(1, 5), uuidFor(2, 5)];

/** Independent expectation: ISO UTC with the fraction truncated/padded to exactly 6 digits. */
function iso6(value: string): string {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(value);
  if (!m) throw new Error(`unexpected random timestamp ${value}`);
  return `${m[1]}.${(m[2] ?? '').padEnd(6, '0').slice(0, 6)}Z`;
}

function randomRow(table: SourceTable, i: number): Record<string, unknown> {
  const row = { ...(loadTableSchema(table).type.random() as unknown as Record<string, unknown>) };
  if ('company_id' in row) row.company_id = COMPANIES[i % COMPANIES.length];
  if (table === 'companies') row.id = COMPANIES[i % COMPANIES.length];
  return row;
}

function expected(table: SourceTable, row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    SOURCE_COLUMNS[table].map((c) => {
      const v = row[c.name] ?? null;
      return [c.name, c.kind === 'timestamptz' && typeof v === 'string' ? iso6(v) : v];
    }),
  );
}

const FORMS = [
  { inlineSchema: true, decimalMode: 'precise' },
  { inlineSchema: true, decimalMode: 'string' },
  { inlineSchema: false, decimalMode: 'precise' },
  { inlineSchema: false, decimalMode: 'string' },
] as const;

describe.each(FORMS)('random rows, inline schema $inlineSchema, $decimalMode decimals', (form) => {
  const decode = createDecoder({ topicPrefix: 'pda', bareDecimalMode: form.decimalMode, avscTypes });
  it.each(SOURCE_TABLES)('%s: 40 random rows decode exactly', (table) => {
    for (let i = 0; i < 40; i++) {
      const row = randomRow(table, i);
      const ev = encodeEvent({ table, op: i % 2 ? 'u' : 'c', row, lsn: 100 + i, tsMs: 5 }, form);
      const result = decode({
        topic: ev.topic,
        partition: 0,
        offset: String(i),
        key: ev.key,
        value: ev.value,
      });
      expect(result.type === 'change' && result.change.kind === 'upsert' && result.change.row).toEqual(
        expected(table, row),
      );
    }
  });
});

describe('random rows through decode + apply', () => {
  const records: RawRecord[] = [];
  let lsn = 1000;
  for (let i = 0; i < COMPANIES.length; i++) {
    const ev = encodeEvent({
      table: 'companies',
      op: 'c',
      row: randomRow('companies', i),
      lsn: lsn++,
      tsMs: 1,
    });
    records.push({
      topic: ev.topic,
      partition: 0,
      offset: String(records.length),
      key: ev.key,
      value: ev.value,
    });
  }
  for (const table of SOURCE_TABLES.filter((t) => SOURCE_COLUMNS[t].some((c) => c.name === 'company_id'))) {
    if (table === 'api_key_companies') continue;
    for (let i = 0; i < 30; i++) {
      const row = randomRow(table, i);
      for (const op of ['c', 'u'] as const) {
        if (op === 'u') row.name = `${String(row.name)} v2`;
        const ev = encodeEvent({ table, op, row, lsn: lsn++, tsMs: 2 }, { inlineSchema: i % 2 === 0 });
        records.push({
          topic: ev.topic,
          partition: 0,
          offset: String(records.length),
          key: ev.key,
          value: ev.value,
        });
      }
      if (i % 10 === 9) {
        const ev = encodeEvent({ table, op: 'd', row, lsn: lsn++, tsMs: 3 }, { inlineSchema: true });
        records.push({
          topic: ev.topic,
          partition: 0,
          offset: String(records.length),
          key: ev.key,
          value: ev.value,
        });
      }
    }
  }

  it('apply twice gives the same projection as once (deletes included)', async () => {
    const once = tempDataDir();
    const { totals } = await applyRecords(once, records, 50);
    expect(totals.deadLettered).toBe(0);
    const twice = tempDataDir();
    await applyRecords(twice, [...records, ...records], 50);
    expect(dumpDataDir(twice)).toEqual(dumpDataDir(once));
  });

  // Newest first, deletes included: a key-only delete then arrives before its row's create; its
  // unrouted tombstone keeps the late create out and ends up in the company file.
  it('newest-first gives the same projection as in order (deletes included)', async () => {
    const inOrder = tempDataDir();
    await applyRecords(inOrder, records, 50);
    const reversed = tempDataDir();
    await applyRecords(reversed, [...records].reverse(), 50);
    expect(dumpDataDir(reversed)).toEqual(dumpDataDir(inOrder));
  });
});
