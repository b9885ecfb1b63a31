import type { ReadHandle } from './read-handle.ts';

/** Reads of control.sqlite the api needs per request: the key by hash, its grants, the company. */

export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly lastFour: string;
  readonly scopes: readonly string[];
  /** ISO 8601 UTC or null. */
  readonly expiresAt: string | null;
  /** ISO 8601 UTC or null: end of the rotation grace period. */
  readonly revokesAt: string | null;
  /** Companies granted to the key, sorted. */
  readonly companyIds: readonly string[];
}

export interface CompanyRecord {
  readonly id: string;
  readonly name: string;
  readonly currency: string;
}

export interface IngestStateRecord {
  /** Wall clock (ms) of the last batch ingest committed, null before the first. */
  readonly lastBatchAtMs: number | null;
  /** Source commit time (ms) of the last applied change, null before the first. */
  readonly lastSourceTsMs: number | null;
  /** A source time (ms) up to which every change is known applied (heartbeats), null before the first. */
  readonly sourceCurrentAtMs: number | null;
}

/**
 * The source time up to which the projection is known current: the later of the last applied
 * change's commit time and the last heartbeat confirmed while caught up; null when neither is known.
 */
export function sourceCurrentAt(state: IngestStateRecord): number | null {
  // Files written before control schema 3 may hold 0 for "no source time" after a batch without one.
  const times = [state.lastSourceTsMs, state.sourceCurrentAtMs].filter(
    (t): t is number => t !== null && t > 0,
  );
  return times.length === 0 ? null : Math.max(...times);
}

/**
 * The source time the api's `Data-Current-As-Of` states: never ahead of what is visible. A
 * confirmed heartbeat says every change committed before it is applied (ingest/README.md,
 * "Freshness and heartbeats"); the last applied change's commit time does not (a change of another
 * table, committed before it, may still be on its way), so it is used only while no heartbeat was
 * ever confirmed (a connector without heartbeats). Null when neither is known.
 */
export function confirmedCurrentAt(state: IngestStateRecord): number | null {
  if (state.sourceCurrentAtMs !== null && state.sourceCurrentAtMs > 0) return state.sourceCurrentAtMs;
  return state.lastSourceTsMs !== null && state.lastSourceTsMs > 0 ? state.lastSourceTsMs : null;
}

interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  last_four: string;
  scopes: string;
  expires_at: string | null;
  revokes_at: string | null;
}

/** The key whose SHA-256 (lowercase hex) is `keySha256`, with its grants; undefined when unknown. */
export function readApiKeyByHash(handle: ReadHandle, keySha256: string): ApiKeyRecord | undefined {
  const row = handle
    .statement(
      'api-key-by-hash',
      () =>
        'SELECT id, name, prefix, last_four, scopes, expires_at, revokes_at FROM api_keys WHERE key_sha256 = ?',
    )
    .get(keySha256) as ApiKeyRow | undefined;
  if (!row) return undefined;
  const companyIds = (
    handle
      .statement(
        'api-key-companies',
        () => 'SELECT company_id FROM api_key_companies WHERE api_key_id = ? ORDER BY company_id',
      )
      .all(row.id) as { company_id: string }[]
  ).map((grant) => grant.company_id);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    lastFour: row.last_four,
    scopes: parseScopes(row.scopes),
    expiresAt: row.expires_at,
    revokesAt: row.revokes_at,
    companyIds,
  };
}

export function readCompany(handle: ReadHandle, companyId: string): CompanyRecord | undefined {
  return handle
    .statement('company-by-id', () => 'SELECT id, name, currency FROM companies WHERE id = ?')
    .get(companyId) as CompanyRecord | undefined;
}

export function readIngestState(handle: ReadHandle): IngestStateRecord {
  const row = handle
    .statement(
      'ingest-state',
      () =>
        'SELECT last_batch_at_ms, last_source_ts_ms, source_current_at_ms FROM ingest_state WHERE lock = 1',
    )
    .get() as
    | {
        last_batch_at_ms: number | null;
        last_source_ts_ms: number | null;
        source_current_at_ms: number | null;
      }
    | undefined;
  return {
    lastBatchAtMs: row?.last_batch_at_ms ?? null,
    lastSourceTsMs: row?.last_source_ts_ms ?? null,
    sourceCurrentAtMs: row?.source_current_at_ms ?? null,
  };
}

/** scopes is a JSON array written by ingest; anything else grants nothing (fail closed). */
function parseScopes(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((scope): scope is string => typeof scope === 'string') : [];
  } catch {
    return [];
  }
}
