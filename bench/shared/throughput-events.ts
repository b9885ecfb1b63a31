/**
 * The ingest throughput benchmarks' events (ingest/throughput.ts, pipeline/tracing-cost.ts): one
 * snapshot event per company, then creates and updates spread over the companies in the tables of
 * change-mix.ts, encoded as the shipped connector writes them (JsonConverter with inline schemas
 * unless `inlineSchema` is false; precise decimals).
 */
import { type EncodedEvent, encodeEvent, sampleRow, uuidFor } from '@pda/ingest/testing';
import type { SourceTable } from '@pda/projections/model';
import { MIX_SLOTS } from './change-mix.ts';

export interface ThroughputEventsOptions {
  readonly events: number;
  readonly companies: number;
  readonly inlineSchema: boolean;
}

export function* throughputEvents(
  prefix: string,
  { events, companies, inlineSchema }: ThroughputEventsOptions,
): Generator<EncodedEvent> {
  let lsn = 1_000_000;
  const ts = Date.now() - 60_000;
  for (let c = 0; c < companies; c++) {
    yield encodeEvent(
      { table: 'companies', op: 'r', row: sampleRow('companies', c, uuidFor(c, 7)), lsn: lsn++, tsMs: ts },
      { topicPrefix: prefix, inlineSchema },
    );
  }
  // 80 % creates, 20 % updates of an earlier row (same id): the version guard has work to do.
  for (let i = companies; i < events; i++) {
    const table = MIX_SLOTS[i % MIX_SLOTS.length] as SourceTable;
    const n = i % 5 === 4 ? i - 40 : i;
    const row = sampleRow(table, n, uuidFor(n % companies, 7));
    yield encodeEvent(
      { table, op: i % 5 === 4 ? 'u' : 'c', row, lsn: lsn++, tsMs: ts + Math.floor(i / 100) },
      { topicPrefix: prefix, inlineSchema },
    );
  }
}
