import type { Change } from '@pda/projections/model';
import { describe, expect, it } from 'vitest';
import { fromWire, toWire } from '../src/apply-thread/wire.ts';
import { createDecoder } from '../src/decode/index.ts';
import { fixtureRecords } from './support/fixtures.ts';

const roundTrip = (changes: readonly Change[]) =>
  fromWire(structuredClone(toWire(changes)) as ReturnType<typeof toWire>);

describe('thread wire format', () => {
  it('round-trips every captured real event exactly (every op, tables, origins)', () => {
    const decode = createDecoder({
      topicPrefix: 'pda',
      bareDecimalMode: 'precise',
      avscTypes: () => undefined,
    });
    const changes = fixtureRecords().flatMap((r) => {
      const d = decode(r);
      return d.type === 'change' ? [d.change] : [];
    });
    expect(changes.length).toBeGreaterThan(20);
    expect(new Set(changes.map((c) => c.kind))).toEqual(new Set(['upsert', 'delete']));
    expect(roundTrip(changes)).toEqual(changes);
  });

  it('keeps truncates, missing origins, unavailable columns, arrays and rows of different shapes', () => {
    const position = { lsn: 5, tsMs: 9 };
    const changes: Change[] = [
      { kind: 'truncate', table: 'sites', position },
      { kind: 'truncate', table: 'services', position, origin: { topic: 't', partition: 2, offset: '99' } },
      {
        kind: 'upsert',
        op: 'u',
        table: 'api_keys',
        key: { id: 'k' },
        row: { id: 'k', scopes: ['sites:read', 'services:read'], expires_at: null },
        unavailable: ['hash'],
        position,
      },
      // Same table, other columns (a schema change mid-batch): its own shape.
      {
        kind: 'upsert',
        op: 'c',
        table: 'api_keys',
        key: { id: 'j' },
        row: { id: 'j', n: 1.5 },
        unavailable: [],
        position,
      },
      {
        kind: 'upsert',
        op: 'r',
        table: 'api_keys',
        key: { id: 'i' },
        row: { id: 'i', scopes: [] },
        unavailable: [],
        position,
      },
      {
        kind: 'delete',
        table: 'api_key_companies',
        key: { api_key_id: 'k', company_id: 'c' },
        position,
        origin: { topic: 't', partition: 0, offset: '1' },
      },
    ];
    expect(roundTrip(changes)).toEqual(changes);
  });

  it('sends each column-name list once per batch', () => {
    const rows: Change[] = Array.from({ length: 100 }, (_, i) => ({
      kind: 'upsert',
      op: 'c',
      table: 'sites',
      key: { id: `s${i}` },
      row: { id: `s${i}`, name: `n${i}` },
      unavailable: [],
      position: { lsn: i, tsMs: i },
    }));
    const wire = toWire(rows);
    expect(wire.rowShapes).toEqual([['id', 'name']]);
    expect(wire.keyShapes).toEqual([['id']]);
  });
});
