import { existsSync, renameSync } from 'node:fs';
import type { ProjectionDb } from '../../model/open.ts';
import { companyPath } from '../../model/paths.ts';
import { type CompanyFault, readCompanyFaults } from '../../read/company-faults.ts';

/**
 * Company files out of service (control.sqlite `company_faults`, control schema 4) and the
 * companies whose file the writer has written (`company_files`), kept in memory by the one writer.
 *
 * Why per company: a damaged file (deleted, replaced, corrupt) is one tenant's problem. Failing the
 * whole batch for it would stop every other company (the batch would be retried forever); applying
 * to a new empty file would silently serve a partial projection. Instead the company is taken out
 * of service: its changes are not applied (they are read again from Kafka by its rebuild), the api
 * answers 503 for it, and the others go on.
 */

/** The writer's view: which files must exist, which companies are out of service. */
export class CompanyFaults {
  readonly #db: ProjectionDb;
  readonly #dataDir: string;
  readonly #known = new Set<string>();
  #faults = new Map<string, CompanyFault>();

  constructor(db: ProjectionDb, dataDir: string) {
    this.#db = db;
    this.#dataDir = dataDir;
    for (const id of db.prepare('SELECT company_id FROM company_files').pluck().all() as string[]) {
      this.#known.add(id);
    }
    this.reload();
  }

  reload(): void {
    this.#faults = new Map(readCompanyFaults(this.#db).map((f) => [f.companyId, f]));
  }

  list(): CompanyFault[] {
    return [...this.#faults.values()];
  }

  get(companyId: string): CompanyFault | undefined {
    return this.#faults.get(companyId);
  }

  /** The company whose rebuild's backfill is being applied right now (apply-batch.ts). */
  backfilling: string | undefined;

  /** Damaged or being rebuilt: live batches apply nothing to its file. */
  isOutOfService(companyId: string): boolean {
    return this.#faults.has(companyId);
  }

  /** Nothing may be opened for it: out of service, unless its backfill is being applied. */
  isDamaged(companyId: string): boolean {
    return this.#faults.has(companyId) && companyId !== this.backfilling;
  }

  /**
   * Whether a missing file of this company means it was lost: the writer wrote it before and no
   * rebuild is creating it again.
   */
  expectsFile(companyId: string): boolean {
    return this.#known.has(companyId) && this.#faults.get(companyId)?.state !== 'rebuilding';
  }

  /** Companies written by a batch; inside the control transaction (rolled back with it). */
  recordFiles(companyIds: Iterable<string>): void {
    for (const id of companyIds) {
      if (this.#known.has(id)) continue;
      this.#db.prepare('INSERT OR IGNORE INTO company_files (company_id) VALUES (?)').run(id);
    }
  }

  /** After the control transaction committed: the recorded companies are known from now on. */
  recorded(companyIds: Iterable<string>): void {
    for (const id of companyIds) this.#known.add(id);
  }

  /**
   * Takes a company out of service: its file (and -wal/-shm: a new file next to an old WAL would
   * have that WAL replayed into it) is moved aside for inspection, and the fault is committed at
   * once in its own transaction. The caller has closed the writer's handle.
   */
  markDamaged(companyId: string, reason: string, nowMs: number): CompanyFault {
    const movedTo = moveAside(this.#dataDir, companyId, `damaged-${nowMs}`);
    this.#db
      .prepare(
        `INSERT INTO company_faults (company_id, state, reason, detected_at_ms, moved_to)
         VALUES (?, 'damaged', ?, ?, ?)
         ON CONFLICT (company_id) DO UPDATE SET state = 'damaged', reason = excluded.reason,
           detected_at_ms = excluded.detected_at_ms, moved_to = coalesce(excluded.moved_to, moved_to),
           rebuild_started_at_ms = NULL`,
      )
      .run(companyId, reason.slice(0, 500), nowMs, movedTo);
    this.#known.add(companyId);
    this.reload();
    return this.#faults.get(companyId) as CompanyFault;
  }

  /**
   * The company's rebuild starts: its backfill writes a new, empty file in its place, which the api
   * does not read until `finishRebuild` (live batches still skip the company meanwhile). A file
   * still in place (a rebuild asked for a healthy company, or one only the api found unreadable)
   * is moved aside first.
   */
  startRebuild(companyId: string, nowMs: number): CompanyFault {
    const movedTo = moveAside(this.#dataDir, companyId, `replaced-${nowMs}`);
    this.#db
      .prepare(
        `INSERT INTO company_faults (company_id, state, reason, detected_at_ms, moved_to, rebuild_started_at_ms)
         VALUES (?, 'rebuilding', 'rebuild requested', ?, ?, ?)
         ON CONFLICT (company_id) DO UPDATE SET state = 'rebuilding',
           moved_to = coalesce(excluded.moved_to, moved_to), rebuild_started_at_ms = excluded.rebuild_started_at_ms`,
      )
      .run(companyId, nowMs, movedTo, nowMs);
    this.#known.add(companyId);
    this.reload();
    return this.#faults.get(companyId) as CompanyFault;
  }

  /** The rebuilt file is complete: the company is back in service (the api reads it again). */
  finishRebuild(companyId: string): void {
    this.#db
      .prepare("DELETE FROM company_faults WHERE company_id = ? AND state = 'rebuilding'")
      .run(companyId);
    this.reload();
  }
}

/** Moves companies/<id>.sqlite (and its -wal, -shm) to `<name>.<suffix>`; the new main path or null. */
function moveAside(dataDir: string, companyId: string, suffix: string): string | null {
  const path = companyPath(dataDir, companyId);
  let moved: string | null = null;
  for (const ext of ['', '-wal', '-shm']) {
    if (!existsSync(path + ext)) continue;
    renameSync(path + ext, `${path}.${suffix}${ext}`);
    if (ext === '') moved = `${path}.${suffix}`;
  }
  return moved;
}
