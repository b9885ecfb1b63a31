// A partner's program as docs/partners.md describes it, written with @pda/client: a local copy
// (one Map per resource, by id) kept by a full export, then runs of `syncSince(<start of the last
// successful run>)` applied in the order received (records upserted, deletions removed), and a
// full export again on 410 sync_window_expired. Its clock may be off by `clockOffsetMs`: it takes
// every start time from that clock, as a partner's machine would. It counts what it receives.
import { isDeepStrictEqual } from 'node:util';
import { type Client, type Resource, type ResourceRecord, SyncWindowExpiredError } from '@pda/client';

/** Every exported resource, with its relations included (a partner's copy holds them too). */
export const SYNCED: ReadonlyArray<{ resource: Resource; query: { include?: string } }> = [
  { resource: 'sites', query: { include: 'contacts' } },
  { resource: 'services', query: {} },
  { resource: 'equipment', query: { include: 'category' } },
  { resource: 'equipment-categories', query: {} },
  { resource: 'consumables', query: {} },
];

export type Copy = Map<Resource, Map<string, ResourceRecord<Resource>>>;

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
  readonly figures: PartnerFigures = {
    runs: 0,
    fullExports: 0,
    records: 0,
    duplicateRecords: 0,
    deletions: 0,
    deletionsOfAbsentIds: 0,
  };
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
        if (item.kind === 'record') {
          this.figures.records += 1;
          if (isDeepStrictEqual(records.get(item.record.id), item.record)) this.figures.duplicateRecords += 1;
          records.set(item.record.id, item.record);
        } else {
          this.figures.deletions += 1;
          if (!records.delete(item.deletion.id)) this.figures.deletionsOfAbsentIds += 1;
        }
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
