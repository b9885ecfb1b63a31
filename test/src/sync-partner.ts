// A partner's program as docs/partners.md describes it, written with @pda/client: a local copy
// (one Map per resource, by id) kept by a full export, then runs of `syncSince(<start of the last
// successful run>)` applied in the order received (records upserted, deletions removed), and a
// full export again on 410 sync_window_expired. Its clock may be off by `clockOffsetMs`: it takes
// every start time from that clock, as a partner's machine would. It counts what it receives.
import { isDeepStrictEqual } from 'node:util';
import {
  type Client,
  type Resource,
  type ResourceRecord,
  type SyncItem,
  type SyncTokens,
  SyncWindowExpiredError,
} from '@pda/client';
import type pg from 'pg';
import { documentsFromPostgres } from './documents-from-postgres.ts';

/** Every exported resource, with its relations included (a partner's copy holds them too). */
export const SYNCED: ReadonlyArray<{ resource: Resource; query: { include?: string } }> = [
  { resource: 'sites', query: { include: 'contacts' } },
  { resource: 'services', query: {} },
  { resource: 'equipment', query: { include: 'category' } },
  { resource: 'equipment-categories', query: {} },
  { resource: 'consumables', query: {} },
];

export type Copy = Map<Resource, Map<string, ResourceRecord<Resource>>>;

/** PostgreSQL's state of a company as the api presents it, resource by resource: what a copy must equal. */
export async function copyFromPostgres(pool: pg.Pool, company: string): Promise<Copy> {
  const copy: Copy = new Map();
  for (const { resource } of SYNCED) {
    copy.set(resource, (await documentsFromPostgres(pool, company, resource)) as Map<string, never>);
  }
  return copy;
}

export interface PartnerFigures {
  runs: number;
  fullExports: number;
  /** Records received by incremental runs, and how many of them the copy already had as is. */
  records: number;
  duplicateRecords: number;
  /** Deletions received, and how many named an id the copy did not hold (already removed, or never exported). */
  deletions: number;
  deletionsOfAbsentIds: number;
}

/** Figures of a partner that has not run yet. */
function noFigures(): PartnerFigures {
  return { runs: 0, fullExports: 0, records: 0, duplicateRecords: 0, deletions: 0, deletionsOfAbsentIds: 0 };
}

/**
 * Applies one change of an incremental run to a resource's copy, counting it: a record upserted (a
 * duplicate when the copy already held it as is), a deletion removed (of an id not held, or not).
 * Returns whether a record was a duplicate.
 */
function applyCounted(
  records: Map<string, ResourceRecord<Resource>>,
  item: SyncItem<Resource>,
  figures: PartnerFigures,
): boolean {
  if (item.kind === 'record') {
    figures.records += 1;
    const duplicate = isDeepStrictEqual(records.get(item.record.id), item.record);
    if (duplicate) figures.duplicateRecords += 1;
    records.set(item.record.id, item.record);
    return duplicate;
  }
  figures.deletions += 1;
  if (!records.delete(item.deletion.id)) figures.deletionsOfAbsentIds += 1;
  return false;
}

/** Every record of every resource, as a full export sees them now. */
export async function fullCopy(client: Client): Promise<Copy> {
  const copy: Copy = new Map();
  for (const { resource, query } of SYNCED) {
    const records = new Map<string, ResourceRecord<Resource>>();
    for await (const record of client.exportAll(resource, { query })) records.set(record.id, record);
    copy.set(resource, records);
  }
  return copy;
}

export class SyncPartner {
  copy: Copy = new Map();
  readonly figures: PartnerFigures = noFigures();
  readonly clockOffsetMs: number;
  readonly #client: Client;
  #lastStart: Date | undefined;

  constructor(client: Client, clockOffsetMs: number) {
    this.#client = client;
    this.clockOffsetMs = clockOffsetMs;
  }

  /** The partner's clock. */
  now(): Date {
    return new Date(Date.now() + this.clockOffsetMs);
  }

  /** One run: a full export the first time, else everything changed since the last run started. */
  async run(): Promise<void> {
    const start = this.now();
    if (this.#lastStart === undefined) await this.#fullExport();
    else {
      try {
        await this.#syncSince(this.#lastStart);
      } catch (error) {
        if (!(error instanceof SyncWindowExpiredError)) throw error;
        await this.#fullExport();
      }
    }
    this.#lastStart = start; // only once the run succeeded
    this.figures.runs += 1;
  }

  async #fullExport(): Promise<void> {
    this.copy = await fullCopy(this.#client);
    this.figures.fullExports += 1;
  }

  async #syncSince(since: Date): Promise<void> {
    for (const { resource, query } of SYNCED) {
      const records = this.copy.get(resource) ?? new Map();
      for await (const item of this.#client.syncSince(resource, since, { query })) {
        applyCounted(records, item, this.figures);
      }
      this.copy.set(resource, records);
    }
  }
}

export interface CopyDifference {
  /** Records the source holds that the copy lacks. */
  missing: number;
  /** Records both hold, with another representation. */
  stale: number;
  /** Records the copy holds that the source deleted. */
  notDeleted: number;
  /** A few of them, for a failure message: `<resource>/<id>: <what>`. */
  examples: string[];
}

/** How `have` differs from `want`; all zero when they are equal. */
export function differences(have: Copy, want: Copy): CopyDifference {
  const result: CopyDifference = { missing: 0, stale: 0, notDeleted: 0, examples: [] };
  const note = (line: string) => {
    if (result.examples.length < 5) result.examples.push(line);
  };
  for (const { resource } of SYNCED) {
    const wanted = want.get(resource) ?? new Map();
    const held = have.get(resource) ?? new Map();
    for (const [id, document] of wanted) {
      if (!held.has(id)) {
        result.missing += 1;
        note(`${resource}/${id}: missing`);
      } else if (!isDeepStrictEqual(held.get(id), document)) {
        result.stale += 1;
        note(`${resource}/${id}: have ${JSON.stringify(held.get(id))}, want ${JSON.stringify(document)}`);
      }
    }
    for (const id of held.keys()) {
      if (!wanted.has(id)) {
        result.notDeleted += 1;
        note(`${resource}/${id}: not deleted`);
      }
    }
  }
  return result;
}

export interface TokenPartnerFigures extends PartnerFigures {
  /** Runs that met 410 sync_window_expired (the company rebuilt) and exported again. */
  expired: number;
  /** Duplicates whose id the previous run also brought: changed while that run's walk was under way. */
  duplicatesFromPreviousRun: number;
  /** Answers by status: 304 are polls of an unchanged first page. */
  statuses: Map<number, number>;
  /** The statuses of the last run alone. */
  lastRunStatuses: number[];
}

/**
 * A partner's program with sync tokens (docs/partners.md, "The procedure"): per resource, a full
 * export the first time (`syncFrom(resource, null)`), then `syncFrom(resource, <its last tokens>)`,
 * applied in the order received; tokens stored only at each walk's checkpoint, and a full export of
 * the resource again on 410. Its clock is off by `clockOffsetMs`, which nothing here reads: the
 * procedure takes no time from the partner.
 */
export class TokenPartner {
  copy: Copy = new Map();
  readonly figures: TokenPartnerFigures = {
    ...noFigures(),
    expired: 0,
    duplicatesFromPreviousRun: 0,
    statuses: new Map(),
    lastRunStatuses: [],
  };
  readonly clockOffsetMs: number;
  readonly #client: Client;
  readonly #tokens = new Map<Resource, SyncTokens>();
  #previousRun = new Set<string>();

  /** `makeClient` gets the fetch the partner counts answers with. */
  constructor(makeClient: (fetch: typeof globalThis.fetch) => Client, clockOffsetMs: number) {
    this.clockOffsetMs = clockOffsetMs;
    this.#client = makeClient(async (input, init) => {
      const response = await fetch(input, init);
      const { statuses } = this.figures;
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      this.figures.lastRunStatuses.push(response.status);
      return response;
    });
  }

  async run(): Promise<void> {
    this.figures.lastRunStatuses = [];
    const thisRun = new Set<string>();
    let exported = false;
    let expired = false;
    for (const { resource, query } of SYNCED) {
      try {
        if (!this.#tokens.has(resource)) exported = true;
        await this.#sync(resource, query, thisRun);
      } catch (error) {
        if (!(error instanceof SyncWindowExpiredError)) throw error;
        expired = true;
        exported = true;
        this.#tokens.delete(resource);
        await this.#sync(resource, query, thisRun);
      }
    }
    if (exported) this.figures.fullExports += 1;
    if (expired) this.figures.expired += 1;
    this.#previousRun = thisRun;
    this.figures.runs += 1;
  }

  async #sync(resource: Resource, query: object, thisRun: Set<string>): Promise<void> {
    const from = this.#tokens.get(resource) ?? null;
    const records = from === null ? new Map() : new Map(this.copy.get(resource) ?? []);
    for await (const item of this.#client.syncFrom(resource, from, { query })) {
      if (item.kind === 'checkpoint') {
        this.copy.set(resource, records);
        this.#tokens.set(resource, item.next);
      } else if (from === null) {
        // A full export: into a new copy, not counted as changes (its deletions name nothing held).
        if (item.kind === 'record') {
          records.set(item.record.id, item.record);
          thisRun.add(`${resource}/${item.record.id}`);
        }
      } else {
        const key = item.kind === 'record' ? `${resource}/${item.record.id}` : undefined;
        if (applyCounted(records, item, this.figures) && this.#previousRun.has(key ?? '')) {
          this.figures.duplicatesFromPreviousRun += 1;
        }
        if (key !== undefined) thisRun.add(key);
      }
    }
  }
}
