import type { Change } from '../model/change.ts';
import { processOpenFilesBound } from '../model/descriptors.ts';
import { CompanyFileDamagedError, InvalidCompanyIdError } from '../model/errors.ts';
import { companyPartition } from '../model/ownership.ts';
import { isUuid } from '../model/paths.ts';
import { DEFAULT_STATEMENTS_PER_HANDLE, StatementCounts } from '../model/statement-lru.ts';
import type { TraceLink } from '../model/trace-link.ts';
import type { CompanyFault } from '../read/company-faults.ts';
import { applyBatch, takeOutOfService } from './apply/apply-batch.ts';
import type { BatchResult } from './apply/result.ts';
import { type ClockUs, wallClockUs } from './files/company-file.ts';
import { CompanyFiles } from './files/company-files.ts';
import { ControlFile } from './files/control-file.ts';
import { type DeadLetter, type DeadLetterLimits, pruneDeadLetters } from './upkeep/dead-letters.ts';
import { type PruneCursor, type PruneOptions, type PruneStep, pruneStep } from './upkeep/prune-tombstones.ts';

/**
 * Descriptors the writer's process keeps for everything but company files: control.sqlite, Kafka
 * sockets, the admin port, logs, the apply thread's and Node's own.
 */
export const WRITER_DESCRIPTOR_RESERVE = 512;

export interface ProjectionStoreOptions {
  readonly dataDir: string;
  /**
   * Bound of the LRU of open company writers (each holds 3 file descriptors and its page cache).
   * Default: as many as the process's descriptor limit allows after a reserve (descriptors.ts); on
   * EMFILE the store gives back half of its open files and retries.
   */
  readonly maxOpenCompanies?: number;
  /**
   * Close a company file when no batch wrote to it for this long (ms; 0 or absent: never), checked
   * after each batch: rarely changing tenants then hold no descriptor and no WAL between changes.
   */
  readonly idleCloseMs?: number;
  /**
   * Prepared statements kept per open file, most recently used first (statement-lru.ts); default
   * DEFAULT_STATEMENTS_PER_HANDLE.
   */
  readonly maxStatementsPerFile?: number;
  /**
   * How many dead letters control.sqlite keeps, and how long (dead-letters.ts); default
   * DEFAULT_DEAD_LETTER_LIMITS (100,000, 35 days).
   */
  readonly deadLetters?: DeadLetterLimits;
  /** Source of change times in µs since the epoch (tests inject one). Default: wall clock. */
  readonly clockUs?: ClockUs;
  /** Wall clock in ms for ingest_state and dead letters (tests inject one). */
  readonly nowMs?: () => number;
  /**
   * A writer of a deployment split by company (model/ownership.ts): the tenant partitions it
   * applies. A company row of another writer's partition is kept in control.sqlite (every writer
   * has every company and key) but gets no file here. Plain data: it crosses to the apply thread.
   */
  readonly ownedPartitions?: { readonly partitions: number; readonly applied: readonly number[] };
}

export interface ApplyOptions {
  /** Messages ingest could not decode, recorded in the same control transaction as the batch. */
  readonly deadLetters?: readonly DeadLetter[];
  /**
   * A source time up to which every change is known to be applied (ingest: a Debezium heartbeat
   * received while caught up). Only ever moves forward; the api's staleness is measured from it.
   */
  readonly sourceCurrentAtMs?: number;
  /**
   * A per-company rebuild's backfill (ingest/src/live-rebuild/company-rebuild.ts): the changes of the
   * rows that have been this company's, replayed in order into its new file (and into the files
   * its rows moved to while it was out of service); of control.sqlite only the routes they move.
   * The company must be rebuilding.
   */
  readonly onlyCompany?: string;
  /**
   * With `onlyCompany`: how far the backfill has read each partition ('<topic>/<partition>' → the
   * offset of the last record read, applied with this call or before). The rebuild finishes only
   * once this covers every change the live batches skipped (finishCompanyRebuild).
   */
  readonly readUpTo?: Readonly<Record<string, string>>;
  /**
   * The span of ingest's batch when its trace is sampled: each company transaction notes which of
   * its change times this batch wrote (migration company/007-apply-traces.sql), so the api's span
   * that serves them can link to it.
   */
  readonly trace?: TraceLink;
}

/** A company rebuild cannot finish yet: the backfill has not read as far as the live batches. */
export class RebuildNotCaughtUpError extends Error {
  readonly code = 'rebuild_not_caught_up';
  constructor(partition: string, read: bigint | undefined, live: bigint) {
    super(
      `the backfill read ${partition} up to ${read ?? 'nothing'}, the live batches applied up to ${live}`,
    );
    this.name = 'RebuildNotCaughtUpError';
  }
}

/** How often the open company files are looked at on disk (deleted, replaced, overwritten). */
const ON_DISK_CHECK_MS = 2_000;
/** Files looked at per check (round robin): bounds the check's cost with thousands of open files. */
const ON_DISK_CHECK_FILES = 500;

/**
 * The write side of the projections: the single writer of a data directory (ingest). Owns the
 * control.sqlite writer and an LRU of company writers; not safe to share between processes.
 */
export class ProjectionStore {
  readonly dataDir: string;
  readonly #control: ControlFile;
  readonly #files: CompanyFiles;
  readonly #nowMs: () => number;
  readonly #clockUs: ClockUs;
  /** The statements of control.sqlite and every open company file (BatchResult.statements). */
  readonly #statements: StatementCounts = new StatementCounts();
  readonly #maxStatements: number;
  #checkedOnDiskAt = 0;
  /** While a company is rebuilt: the highest offset per partition of the live batches' changes. */
  readonly #liveUpTo = new Map<string, bigint>();
  /** And how far its backfill has read (ApplyOptions.readUpTo). */
  readonly #backfillUpTo = new Map<string, bigint>();

  private constructor(options: ProjectionStoreOptions) {
    this.dataDir = options.dataDir;
    const clock = options.clockUs ?? wallClockUs;
    this.#clockUs = clock;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#maxStatements = Math.max(1, options.maxStatementsPerFile ?? DEFAULT_STATEMENTS_PER_HANDLE);
    const statements = { max: this.#maxStatements, counts: this.#statements };
    this.#control = new ControlFile(options.dataDir, statements, options.deadLetters);
    const owned = options.ownedPartitions;
    if (owned !== undefined) {
      const applied = new Set(owned.applied);
      this.#control.ownsCompany = (id) => applied.has(companyPartition(id, owned.partitions));
    }
    const max = options.maxOpenCompanies ?? processOpenFilesBound('auto', WRITER_DESCRIPTOR_RESERVE).max;
    this.#files = new CompanyFiles(
      options.dataDir,
      max,
      clock,
      { afterMs: options.idleCloseMs ?? 0, nowMs: this.#nowMs },
      statements,
    );
    this.#files.guard(this.#control.faults);
  }

  /** Creates the data directory and control.sqlite if needed and migrates it. */
  static open(options: ProjectionStoreOptions): ProjectionStore {
    return new ProjectionStore(options);
  }

  /**
   * Applies a batch of changes: one transaction per company file touched, then one for control.
   * Safe to call again with the same batch after a crash at any point (see apply-batch.ts).
   * Throws only for environment failures (I/O, a file from a newer schema); invalid changes are
   * refused, counted and recorded as dead letters.
   */
  applyBatch(changes: readonly Change[], options: ApplyOptions = {}): BatchResult {
    const nowMs = this.#nowMs();
    if (
      options.onlyCompany !== undefined &&
      this.#control.faults.get(options.onlyCompany)?.state !== 'rebuilding'
    ) {
      throw new Error(`company ${options.onlyCompany} is not being rebuilt`);
    }
    const detected: CompanyFault[] = [];
    if (options.onlyCompany === undefined && nowMs - this.#checkedOnDiskAt >= ON_DISK_CHECK_MS) {
      this.#checkedOnDiskAt = nowMs;
      for (const { companyId, reason } of this.#files.checkOnDisk(ON_DISK_CHECK_FILES)) {
        detected.push(
          takeOutOfService(
            this.#control,
            this.#files,
            companyId,
            new CompanyFileDamagedError(companyId, reason),
            nowMs,
          ),
        );
      }
    }
    if (options.onlyCompany === undefined) this.#noteLivePositions(changes);
    else {
      for (const [partition, offset] of Object.entries(options.readUpTo ?? {})) {
        const at = BigInt(offset);
        if (at > (this.#backfillUpTo.get(partition) ?? -1n)) this.#backfillUpTo.set(partition, at);
      }
    }
    this.#control.faults.backfilling = options.onlyCompany;
    const evictedBefore = this.#statements.evicted;
    try {
      const result = applyBatch(
        this.#control,
        this.#files,
        this.dataDir,
        changes,
        options.deadLetters ?? [],
        nowMs,
        options.sourceCurrentAtMs,
        options.onlyCompany,
        detected,
        options.trace,
      );
      const statements = {
        evicted: this.#statements.evicted - evictedBefore,
        held: this.#statements.held,
        maxPerFile: this.#maxStatements,
      };
      return { ...result, statements };
    } finally {
      this.#control.faults.backfilling = undefined;
    }
  }

  /** Only while a company is being rebuilt (its changes in these batches are skipped). */
  #noteLivePositions(changes: readonly Change[]): void {
    if (!this.#control.faults.list().some((f) => f.state === 'rebuilding')) return;
    for (const change of changes) {
      const origin = change.origin;
      if (origin === undefined) continue;
      const partition = `${origin.topic}/${origin.partition}`;
      const at = BigInt(origin.offset);
      if (at > (this.#liveUpTo.get(partition) ?? -1n)) this.#liveUpTo.set(partition, at);
    }
  }

  /** Companies out of service (damaged, or being rebuilt), as the writer knows them. */
  companyFaults(): CompanyFault[] {
    return this.#control.faults.list();
  }

  /**
   * Starts a company's rebuild: its file (if any) is moved aside and from now on its changes go to
   * a new file in its place, which the api does not serve until `finishCompanyRebuild`.
   */
  startCompanyRebuild(companyId: string): CompanyFault {
    if (!isUuid(companyId)) throw new InvalidCompanyIdError(companyId);
    this.#files.drop(companyId);
    this.#liveUpTo.clear();
    this.#backfillUpTo.clear();
    return this.#control.faults.startRebuild(companyId, this.#nowMs());
  }

  /**
   * The backfill has read past every change the live batches skipped for the company: it is back
   * in service, and the next live batch applies its changes (all newer than what the backfill
   * applied, or the same ones again, which the version guards skip). Throws
   * RebuildNotCaughtUpError while the backfill is behind (call again after its next batch).
   */
  finishCompanyRebuild(companyId: string): void {
    if (this.#control.faults.get(companyId)?.state !== 'rebuilding') {
      throw new Error(`company ${companyId} is not being rebuilt`);
    }
    for (const [partition, live] of this.#liveUpTo) {
      const read = this.#backfillUpTo.get(partition);
      if (read === undefined || read < live) throw new RebuildNotCaughtUpError(partition, read, live);
    }
    // Its file exists even when no change of it was read (a company without rows): the api then
    // serves empty collections rather than 503.
    this.#control.faults.backfilling = companyId;
    try {
      this.#files.get(companyId);
    } finally {
      this.#control.faults.backfilling = undefined;
    }
    this.#control.faults.finishRebuild(companyId);
  }

  /**
   * One bounded step of a tombstone prune pass (prune-tombstones.ts): call again with `next` until
   * it is null. Steps are short so applies go on between them; the cutoff is fixed by the first.
   */
  pruneTombstones(options: PruneOptions, cursor?: PruneCursor): PruneStep {
    return pruneStep(this.dataDir, this.#files, options, cursor, this.#clockUs());
  }

  /**
   * One bounded step of dead-letter retention: deletes at most `maxRows` of the oldest letters
   * beyond the row cap or the retention window, in one control transaction. Fewer than `maxRows`
   * deleted: nothing more to prune.
   */
  pruneDeadLetters(maxRows: number): { readonly pruned: number } {
    const nowMs = this.#nowMs();
    const { db, statements, deadLetterLimits } = this.#control;
    const pruned = db.transaction(() => pruneDeadLetters(statements, deadLetterLimits, nowMs, maxRows))();
    return { pruned };
  }

  close(): void {
    this.#files.closeAll();
    this.#control.close();
  }
}
