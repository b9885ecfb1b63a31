import { existsSync } from 'node:fs';
import { companyPath, controlPath, fileVersion, openReader, type ProjectionDb } from '@pda/projections/model';
import { ReadHandle, readIngestState, sourceCurrentAt } from '@pda/projections/read';
import { DOCUMENT_TABLE_NAMES } from '@pda/schemas/registry';
import { companyFileIds, fileBytes } from '../files/data-dir.ts';

/**
 * What `pda projections companies` reports: per company file its row counts, size, schema and
 * representation version and last change time; for the data directory, how far behind its source
 * ingest is. Each file is read in one read transaction (its counts agree with each other).
 */

/** The tables counted per company: the exported ones and the tombstones. */
export const COUNTED_TABLES: readonly string[] = [...DOCUMENT_TABLE_NAMES, 'tombstones'];

export interface CompanySummary {
  readonly id: string;
  /** From control.sqlite; null when control.sqlite does not know the company (deleted, or not yet). */
  readonly name: string | null;
  readonly currency: string | null;
  /** null when control.sqlite knows the company but it has no file yet (no rows projected). */
  readonly file: {
    readonly bytes: number;
    readonly walBytes: number;
    readonly schemaVersion: number;
    readonly representation: number | null;
    readonly lastChangedUs: number | null;
    readonly lastChangedAt: string | null;
    readonly rows: Readonly<Record<string, number>>;
  } | null;
}

export interface IngestSummary {
  readonly lastBatchAt: string | null;
  readonly lastSourceAt: string | null;
  /** The source time up to which every change is known applied (as the api's health computes it). */
  readonly sourceCurrentAt: string | null;
  /** now − sourceCurrentAt, as the api's pda_api_projection_staleness_seconds; null when unknown. */
  readonly lagSeconds: number | null;
}

export interface DataDirSummary {
  readonly dataDir: string;
  readonly controlSchemaVersion: number | null;
  readonly ingest: IngestSummary | null;
  readonly companies: readonly CompanySummary[];
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** ISO 8601 UTC with microseconds, as the files write timestamps. */
export function isoFromMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = String(us % 1_000_000).padStart(6, '0');
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${micros}Z`);
}

function tablesOf(db: ProjectionDb): Set<string> {
  return new Set(
    (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map(
      (row) => row.name,
    ),
  );
}

export interface ControlCompany {
  readonly name: string;
  readonly currency: string;
  readonly created_at: string;
  readonly updated_at: string;
}

function readControl(dataDir: string, nowMs: number) {
  const path = controlPath(dataDir);
  if (!existsSync(path)) return { version: null, ingest: null, companies: new Map<string, ControlCompany>() };
  const db = openReader(path);
  try {
    const handle = new ReadHandle(db);
    return handle.snapshot(() => {
      const tables = tablesOf(db);
      const rows = tables.has('companies')
        ? (db
            .prepare('SELECT id, name, currency, created_at, updated_at FROM companies ORDER BY id')
            .all() as (ControlCompany & { id: string })[])
        : [];
      const companies = new Map(rows.map(({ id, ...company }) => [id, company] as const));
      let ingest: IngestSummary | null = null;
      if (tables.has('ingest_state')) {
        const state = readIngestState(handle);
        const current = sourceCurrentAt(state);
        ingest = {
          lastBatchAt: iso(state.lastBatchAtMs),
          lastSourceAt: iso(state.lastSourceTsMs),
          sourceCurrentAt: iso(current),
          lagSeconds: current === null ? null : Math.max(0, (nowMs - current) / 1000),
        };
      }
      return { version: fileVersion(db), ingest, companies };
    });
  } finally {
    db.close();
  }
}

/** The companies control.sqlite knows, by id (empty without a control.sqlite). */
export function summarizeControlCompanies(dataDir: string): ReadonlyMap<string, ControlCompany> {
  return readControl(dataDir, Date.now()).companies;
}

function readCompanyFile(dataDir: string, id: string): NonNullable<CompanySummary['file']> {
  const path = companyPath(dataDir, id);
  const db = openReader(path);
  try {
    return new ReadHandle(db).snapshot(() => {
      const tables = tablesOf(db);
      const rows: Record<string, number> = {};
      for (const table of COUNTED_TABLES) {
        if (!tables.has(table)) continue;
        // Names from the registry, not from input.
        rows[table] = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
      }
      const metaColumns = new Set(
        (db.prepare("SELECT name FROM pragma_table_info('meta')").all() as { name: string }[]).map(
          (c) => c.name,
        ),
      );
      const meta = db
        .prepare(
          `SELECT last_changed_us, ${metaColumns.has('representation') ? 'representation' : 'NULL'} AS representation FROM meta`,
        )
        .get() as { last_changed_us: number; representation: number | null } | undefined;
      const lastChangedUs = meta && meta.last_changed_us > 0 ? meta.last_changed_us : null;
      return {
        ...fileBytes(path),
        schemaVersion: fileVersion(db),
        representation: meta?.representation ?? null,
        lastChangedUs,
        lastChangedAt: lastChangedUs === null ? null : isoFromMicros(lastChangedUs),
        rows,
      };
    });
  } finally {
    db.close();
  }
}

export function summarizeDataDir(dataDir: string, nowMs = Date.now()): DataDirSummary {
  const control = readControl(dataDir, nowMs);
  const files = new Set(companyFileIds(dataDir));
  const ids = [...new Set([...files, ...control.companies.keys()])].sort();
  const companies = ids.map((id): CompanySummary => {
    const known = control.companies.get(id);
    return {
      id,
      name: known?.name ?? null,
      currency: known?.currency ?? null,
      file: files.has(id) ? readCompanyFile(dataDir, id) : null,
    };
  });
  return { dataDir, controlSchemaVersion: control.version, ingest: control.ingest, companies };
}
