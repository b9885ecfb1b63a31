/**
 * The benchmarks' change stream: the mix of tables a field-service company's changes spread over
 * (ingest/throughput.ts, tenants/fanout.ts). Companies are not in it: they come first, once each.
 */
import type { SourceTable } from '@pda/projections/model';

/** Table and its share in percent. */
export const MIX: readonly (readonly [SourceTable, number])[] = [
  ['sites', 40],
  ['services', 15],
  ['site_contacts', 15],
  ['equipment', 10],
  ['consumables', 10],
  ['equipment_categories', 10],
];

/** 100 slots in MIX's proportions: event i goes to `MIX_SLOTS[i % MIX_SLOTS.length]`. */
export const MIX_SLOTS: readonly SourceTable[] = MIX.flatMap(([table, share]) =>
  Array<SourceTable>(share).fill(table),
);
