// Tombstones on compacted topics (src/decode/partition-positions.ts): after the log cleaner removed a
// deleted row's `d` event, its tombstone alone must still delete a row read earlier in the same
// partition — and must never delete a later re-insert of the same key.
import { describe, expect, it } from 'vitest';
import { createDecoder, type RawRecord } from '../src/decode/index.ts';
import { encodeEvent, sampleRow, uuidFor } from '../src/testing/index.ts';
import { applyRecords, tempDataDir } from './support/apply.ts';
import { rowsOf } from './support/dump.ts';

const company = uuidFor(7, 7);
const companyRow = sampleRow('companies', 1, company);
const site = (n: number) => sampleRow('sites', n, company);

/** Records of one partition per topic, offsets in the order given (gaps allowed, as after compaction). */
function records(
  events: Array<{
    op: 'c' | 'u' | 'd' | 'tombstone';
    table: 'companies' | 'sites';
    row: Record<string, unknown>;
    lsn: number;
    offset: number;
  }>,
): RawRecord[] {
  return events.map(({ op, table, row, lsn, offset }) => {
    const event = encodeEvent(
      { table, op: op === 'tombstone' ? 'd' : op, row, lsn, tsMs: 1 },
      { inlineSchema: true },
    );
    return {
      topic: event.topic,
      partition: 0,
      offset: String(offset),
      key: event.key,
      value: op === 'tombstone' ? null : event.value,
    };
  });
}

const decoder = () =>
  createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined });

describe('a tombstone on a compacted topic', () => {
  it('is ignored right after its own `d` event', () => {
    const decode = decoder();
    const [created, deleted, tombstone] = records([
      { op: 'c', table: 'sites', row: site(1), lsn: 100, offset: 0 },
      { op: 'd', table: 'sites', row: site(1), lsn: 200, offset: 1 },
      { op: 'tombstone', table: 'sites', row: site(1), lsn: 200, offset: 2 },
    ]);
    decode(created!);
    expect(decode(deleted!)).toMatchObject({ type: 'change', change: { kind: 'delete' } });
    expect(decode(tombstone!)).toEqual({ type: 'ignored', reason: 'tombstone' });
  });

  it('without its `d` deletes at the highest LSN read in the partition + 1', () => {
    const decode = decoder();
    const [a, b, tombstone] = records([
      { op: 'c', table: 'sites', row: site(1), lsn: 100, offset: 0 },
      { op: 'u', table: 'sites', row: site(2), lsn: 300, offset: 5 },
      { op: 'tombstone', table: 'sites', row: site(1), lsn: 0, offset: 9 },
    ]);
    decode(a!);
    decode(b!);
    expect(decode(tombstone!)).toMatchObject({
      type: 'change',
      change: { kind: 'delete', table: 'sites', key: { id: site(1).id }, position: { lsn: 301 } },
    });
  });

  it('is ignored when the decoder has read nothing before it in that partition', () => {
    const decode = decoder();
    const [other] = records([{ op: 'c', table: 'companies', row: companyRow, lsn: 500, offset: 0 }]);
    const [tombstone] = records([{ op: 'tombstone', table: 'sites', row: site(1), lsn: 0, offset: 3 }]);
    decode(other!); // another topic's position says nothing about this one
    expect(decode(tombstone!)).toEqual({ type: 'ignored', reason: 'tombstone' });
  });

  it('is ignored after a seek back: what was read past it says nothing about it', () => {
    const decode = decoder();
    const [a, tombstone, b] = records([
      { op: 'c', table: 'sites', row: site(1), lsn: 100, offset: 0 },
      { op: 'tombstone', table: 'sites', row: site(1), lsn: 0, offset: 1 },
      { op: 'c', table: 'sites', row: site(1), lsn: 900, offset: 2 },
    ]);
    decode(a!);
    decode(b!); // read ahead, then the partition is sought back to offset 1
    expect(decode(tombstone!)).toEqual({ type: 'ignored', reason: 'tombstone' });
  });

  it('removes a row whose `d` was cleaned away, and a later re-insert of the key survives it, also on replay', async () => {
    const dir = tempDataDir('compacted-tombstones-');
    const log = records([
      { op: 'c', table: 'companies', row: companyRow, lsn: 50, offset: 0 },
      { op: 'c', table: 'sites', row: site(1), lsn: 100, offset: 0 },
      { op: 'c', table: 'sites', row: site(2), lsn: 110, offset: 1 },
      // offsets 2..3 (site 1's `d` at lsn 200, ...) were removed by the log cleaner
      { op: 'tombstone', table: 'sites', row: site(1), lsn: 0, offset: 4 },
      { op: 'u', table: 'sites', row: site(2), lsn: 250, offset: 5 },
      { op: 'c', table: 'sites', row: { ...site(1), name: 'again' }, lsn: 400, offset: 6 },
    ]);
    await applyRecords(dir, log.slice(0, 4));
    expect(rowsOf(dir, company, 'sites').map((r) => r.id)).toEqual([site(2).id]);
    await applyRecords(dir, log.slice(4));
    expect(
      rowsOf(dir, company, 'sites')
        .map((r) => r.name)
        .sort(),
    ).toEqual(['again', site(2).name].sort());
    // A redelivery of everything (a new process): the tombstone meets the re-inserted row and skips it.
    await applyRecords(dir, log);
    expect(
      rowsOf(dir, company, 'sites')
        .map((r) => r.name)
        .sort(),
    ).toEqual(['again', site(2).name].sort());
  });
});
