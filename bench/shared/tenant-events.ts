/**
 * Inputs of tenants/fanout.ts: how changes and requests spread over companies, and the Debezium
 * events of one case (encoded as ingest/throughput.ts encodes them: @pda/ingest/testing).
 */

import { type EncodedEvent, encodeEvent, sampleRow, uuidFor } from '@pda/ingest/testing';
import type { KeyMaterial } from '@pda/operator-tools/keys';
import type { SourceTable } from '@pda/projections/model';
import { MIX_SLOTS } from './change-mix.ts';

export type Spread = 'uniform' | 'zipf';

/** Zipf exponent: company k (0-based) weighs 1/(k+1)^s, a few big tenants and a long tail. */
export const ZIPF_S = 1.1;

/** Company ids of a case: the same as ingest/throughput.ts's (company c = uuidFor(c, 7)). */
export const companyId = (c: number) => uuidFor(c, 7);

/** Maps a uniform u ∈ [0, 1) to a company index 0..companies-1 with the spread's weights. */
export function companyPicker(spread: Spread, companies: number): (u: number) => number {
  if (spread === 'uniform') return (u) => Math.min(companies - 1, Math.floor(u * companies));
  const cdf = new Float64Array(companies);
  let total = 0;
  for (let k = 0; k < companies; k++) {
    total += (k + 1) ** -ZIPF_S;
    cdf[k] = total;
  }
  return (u) => {
    const target = u * total;
    let lo = 0;
    let hi = companies - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] ?? total) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Share of the events (or requests) the biggest company gets under a spread. */
export function biggestShare(spread: Spread, companies: number): number {
  if (spread === 'uniform') return 1 / companies;
  let total = 0;
  for (let k = 0; k < companies; k++) total += (k + 1) ** -ZIPF_S;
  return 1 / total;
}

/** A fixed u ∈ [0, 1) per integer (a row keeps its company across its create and update). */
export function unitHash(n: number): number {
  let x = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32;
}

export interface CaseEvents {
  readonly topicPrefix: string;
  readonly companies: number;
  readonly spread: Spread;
  /** Change events of the tenant tables (the measured ones); the setup events come on top. */
  readonly dataEvents: number;
  readonly key: KeyMaterial;
  readonly keyId: string;
}

/** The tenant tables: their events are the measured ones. */
export const DATA_TABLES: readonly SourceTable[] = [...new Set(MIX_SLOTS)];

/** The tables a case's topics hold, control tables first. */
export const CASE_TABLES: readonly SourceTable[] = [
  'companies',
  'api_keys',
  'api_key_companies',
  ...DATA_TABLES,
];

/** Setup events: a `companies` row per company, the key and its grant of every company. */
export const setupEventCount = (companies: number) => 2 * companies + 1;

/**
 * Setup events, then the data events: first one site per company (every company has a file and a
 * page to list, as a customer with data does), then the table mix over the companies by the spread,
 * 80 % creates and 20 % updates of an earlier row (ingest/throughput.ts's shape).
 */
export function* caseEvents(c: CaseEvents): Generator<EncodedEvent> {
  const options = { topicPrefix: c.topicPrefix, inlineSchema: true };
  const pick = companyPicker(c.spread, c.companies);
  // Row n's company: fixed by n, so an update lands where its create did.
  const companyOf = (n: number) => companyId(n < c.companies ? n : pick(unitHash(n)));
  let lsn = 1_000_000;
  const ts = Date.now() - 60_000;
  const event = (table: SourceTable, op: 'c' | 'u' | 'r', row: Record<string, unknown>, at = ts) =>
    encodeEvent({ table, op, row, lsn: lsn++, tsMs: at }, options);

  for (let k = 0; k < c.companies; k++)
    yield event('companies', 'r', sampleRow('companies', k, companyId(k)));
  yield event('api_keys', 'r', {
    ...sampleRow('api_keys', 1, companyId(0)),
    id: c.keyId,
    name: 'tenant-fanout benchmark',
    prefix: c.key.prefix,
    last_four: c.key.lastFour,
    key_sha256: c.key.sha256,
    scopes: ['sites:read'],
    expires_at: null,
    revokes_at: null,
  });
  for (let k = 0; k < c.companies; k++) {
    yield event('api_key_companies', 'r', {
      ...sampleRow('api_key_companies', k, companyId(k)),
      api_key_id: c.keyId,
    });
  }

  for (let i = 0; i < c.dataEvents; i++) {
    const at = ts + Math.floor(i / 100);
    if (i < c.companies) {
      yield event('sites', 'c', sampleRow('sites', i, companyOf(i)), at);
      continue;
    }
    const table = MIX_SLOTS[i % MIX_SLOTS.length] as SourceTable;
    const update = i % 5 === 4 && i - 40 >= 0;
    const n = update ? i - 40 : i;
    yield event(table, update ? 'u' : 'c', sampleRow(table, n, companyOf(n)), at);
  }
}
