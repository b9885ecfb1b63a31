// reconcile(): proves a projection equal to the operational PostgreSQL, or lists where it is not.
// Per company, one source snapshot; every captured table merge-joined with the company file by
// primary key, a batch at a time from each side; then control.sqlite's tables. Rows that differ are
// read again until they settle (settle.ts), so a row merely in flight is never reported.
import { companyPath, isUuid, type ProjectionDb } from '@pda/projections/model';
import { mergeCompare, rowId, type Values } from './compare.ts';
import {
  ALL,
  ProjectionFiles,
  type ProjectionFilter,
  projectionBatches,
  projectionRowsByIds,
} from './projection.ts';
import { type Candidate, type Rows, settle } from './settle.ts';
import { connectSource, lsnValue, type Snapshot, type SourceFilter, SourceReader } from './source.ts';
import { CONTROL_PLANS, type TablePlan, TENANT_PLANS } from './tables.ts';
import type {
  CompanyReport,
  Difference,
  ReconcileOptions,
  ReconcileReport,
  SourcePosition,
  TableCount,
} from './types.ts';

export const DEFAULT_WAIT_MS = 60_000;
export const DEFAULT_CLOCK_MARGIN_MS = 1_000;
const DEFAULT_BATCH_ROWS = 5_000;
const DEFAULT_PROGRESS_ROWS = 50_000;

/** Where a candidate is read again: a company file, or control.sqlite. */
interface Scope {
  readonly company: string | null;
  readonly source: SourceFilter;
  readonly projection: ProjectionFilter;
}

/** The company a control row belongs to: a company's id, a grant's company, none for a key. */
function controlCompany(difference: Difference): string | null {
  if (difference.table === 'companies') return difference.id;
  if (difference.table === 'api_key_companies') return difference.id.split('/')[1] ?? null;
  return null;
}

export class InvalidReconcileRequest extends Error {}

/** A SQLite error met while reading a company file (corrupt pages), with the file named. */
function namedFileError(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes(path)) return error;
  return new Error(`projection file ${path} could not be read (${code}: ${message})`, { cause: error });
}

export async function reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
  const started = performance.now();
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  const progressRows = options.progressRows ?? DEFAULT_PROGRESS_ROWS;
  const onProgress = options.onProgress ?? (() => {});
  for (const company of options.companies ?? []) {
    if (!isUuid(company))
      throw new InvalidReconcileRequest(`not a company id (a lowercase uuid): ${company}`);
  }
  const files = new ProjectionFiles(options.dataDir);
  let connection: Awaited<ReturnType<typeof connectSource>> | undefined;
  try {
    connection = await connectSource(options.pg);
    const source = await SourceReader.load(
      connection.client,
      [...TENANT_PLANS, ...CONTROL_PLANS],
      options.sourceSchema,
    );
    const companies =
      options.companies !== undefined
        ? [...new Set(options.companies)].sort()
        : [...new Set([...(await source.companyIds()), ...files.companyIds()])].sort();

    const candidates: Candidate<Scope>[] = [];
    const positions: SourcePosition[] = [];

    /** Compares one table in one scope, collecting its differences as candidates. */
    const compareTable = async (
      plan: TablePlan,
      scope: Scope,
      db: ProjectionDb | undefined,
      companyOf: (difference: Difference) => string | null,
    ): Promise<TableCount> => {
      const counts = await mergeCompare(
        plan,
        scope.company,
        source.rows(plan, scope.source, batchRows),
        projectionBatches(db, plan, scope.projection, batchRows),
        (difference) => {
          const companyId = companyOf(difference);
          const attributed = companyId === difference.companyId ? difference : { ...difference, companyId };
          candidates.push({ plan, companyId, id: difference.id, scope, difference: attributed });
        },
        (rows) => {
          if (rows % progressRows === 0) {
            onProgress({ kind: 'table', companyId: scope.company, table: plan.table, rows, done: false });
          }
        },
      );
      onProgress({
        kind: 'table',
        companyId: scope.company,
        table: plan.table,
        rows: counts.sourceRows,
        done: true,
      });
      return { table: plan.table, ...counts };
    };

    // Tenant tables, a company at a time: one snapshot, one file handle.
    const companyReports: CompanyReport[] = [];
    for (const [index, company] of companies.entries()) {
      options.signal?.throwIfAborted();
      const before = candidates.length;
      const scope: Scope = {
        company,
        source: { where: 'company_id = $1', params: [company] },
        projection: ALL,
      };
      const tables: TableCount[] = [];
      let snapshot: Snapshot;
      try {
        const db = files.company(company);
        try {
          snapshot = await source.begin();
          try {
            for (const plan of TENANT_PLANS) tables.push(await compareTable(plan, scope, db, () => company));
          } finally {
            await source.end();
          }
        } finally {
          db?.close();
        }
      } catch (error) {
        throw namedFileError(error, companyPath(options.dataDir, company));
      }
      positions.push(snapshot);
      const sourceRows = tables.reduce((sum, t) => sum + t.sourceRows, 0);
      companyReports.push({
        companyId: company,
        tables,
        sourceRows,
        projectionRows: tables.reduce((sum, t) => sum + t.projectionRows, 0),
        differences: 0,
        snapshot: { lsn: snapshot.lsn, at: snapshot.at },
      });
      onProgress({
        kind: 'company',
        companyId: company,
        index: index + 1,
        count: companies.length,
        rows: sourceRows,
        candidates: candidates.length - before,
      });
    }

    // Control tables: every row when no company was named, else the named companies' rows and the
    // keys granted to them on either side.
    const controlScopes = await controlScopesFor(options.companies ? companies : undefined, source, files);
    const controlTables: TableCount[] = [];
    const controlSnapshot = await source.begin();
    try {
      for (const plan of CONTROL_PLANS) {
        controlTables.push(
          await compareTable(plan, controlScopes.get(plan.table)!, files.control, controlCompany),
        );
      }
    } finally {
      await source.end();
    }
    positions.push(controlSnapshot);

    const scanMs = performance.now() - started;
    // Rows that differed: read again until they settle.
    const settled = await settle(
      candidates,
      {
        readSource: async (list) => {
          const snapshot = await source.begin();
          try {
            return {
              atMs: snapshot.atMs,
              rows: await readGrouped(list, (plan, scope, ids) => source.rowsByIds(plan, scope.source, ids)),
            };
          } finally {
            await source.end();
          }
        },
        readProjection: (list) =>
          readGrouped(list, async (plan, scope, ids) => {
            if (scope.company === null || plan.kind === 'control') {
              return projectionRowsByIds(files.control, plan, scope.projection, ids);
            }
            const db = files.company(scope.company);
            try {
              return projectionRowsByIds(db, plan, scope.projection, ids);
            } finally {
              db?.close();
            }
          }),
        currentAtMs: () => files.sourceCurrentAtMs(),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        now: () => Date.now(),
        onRound: (round, rows, waitingForMs) =>
          onProgress({
            kind: 'recheck',
            round,
            rows,
            ...(waitingForMs === undefined ? {} : { waitingFor: new Date(waitingForMs).toISOString() }),
          }),
      },
      {
        waitMs: options.waitMs ?? DEFAULT_WAIT_MS,
        clockMarginMs: options.clockMarginMs ?? DEFAULT_CLOCK_MARGIN_MS,
      },
    );

    const order = (a: Difference, b: Difference) =>
      (a.companyId ?? '').localeCompare(b.companyId ?? '') ||
      a.table.localeCompare(b.table) ||
      a.id.localeCompare(b.id);
    const differences = settled.confirmed.sort(order);
    const unsettled = settled.unsettled.sort(order);
    const perCompany = new Map<string, number>();
    for (const d of differences)
      if (d.companyId) perCompany.set(d.companyId, (perCompany.get(d.companyId) ?? 0) + 1);
    const reports = companyReports.map((r) => ({ ...r, differences: perCompany.get(r.companyId) ?? 0 }));
    const oldest = positions.reduce((a, b) => (lsnValue(b.lsn) < lsnValue(a.lsn) ? b : a));
    const allTables = [...reports.flatMap((r) => r.tables), ...controlTables];
    const sourceRows = allTables.reduce((sum, t) => sum + t.sourceRows, 0);
    const count = (kind: Difference['kind']) => differences.filter((d) => d.kind === kind).length;
    const durationMs = Math.round(performance.now() - started);
    return {
      ok: differences.length === 0 && unsettled.length === 0,
      verifiedThrough: settled.notCaughtUp ? null : { lsn: oldest.lsn, at: oldest.at },
      companies: reports,
      control: { tables: controlTables, snapshot: { lsn: controlSnapshot.lsn, at: controlSnapshot.at } },
      differences,
      unsettled,
      notCaughtUp: settled.notCaughtUp,
      totals: {
        companies: reports.length,
        tables: allTables.length,
        sourceRows,
        projectionRows: allTables.reduce((sum, t) => sum + t.projectionRows, 0),
        differences: differences.length,
        missing: count('missing'),
        extra: count('extra'),
        different: count('different'),
        unsettled: unsettled.length,
      },
      durationMs,
      rowsPerSecond: scanMs > 0 ? Math.round((sourceRows * 1000) / scanMs) : sourceRows,
    };
  } finally {
    files.close();
    await connection?.release();
  }
}

/** Reads candidates grouped by scope and table (one query per group), back in the list's order. */
async function readGrouped(
  list: readonly Candidate<Scope>[],
  read: (plan: TablePlan, scope: Scope, ids: string[]) => Promise<Values[]> | Values[],
): Promise<Rows> {
  const groups = new Map<Scope, Map<TablePlan, Candidate<Scope>[]>>();
  for (const candidate of list) {
    let byPlan = groups.get(candidate.scope);
    if (!byPlan) {
      byPlan = new Map();
      groups.set(candidate.scope, byPlan);
    }
    const group = byPlan.get(candidate.plan);
    if (group) group.push(candidate);
    else byPlan.set(candidate.plan, [candidate]);
  }
  const found = new Map<Candidate<Scope>, Values>();
  for (const [scope, byPlan] of groups) {
    for (const [plan, group] of byPlan) {
      const rows = await read(
        plan,
        scope,
        group.map((c) => c.id),
      );
      const byId = new Map(rows.map((row) => [rowId(plan, row), row]));
      for (const candidate of group) {
        const row = byId.get(candidate.id);
        if (row) found.set(candidate, row);
      }
    }
  }
  return list.map((candidate) => found.get(candidate));
}

/** The control tables' filters on both sides. */
async function controlScopesFor(
  companies: readonly string[] | undefined,
  source: SourceReader,
  files: ProjectionFiles,
): Promise<Map<string, Scope>> {
  const everything: Scope = { company: null, source: { where: 'true', params: [] }, projection: ALL };
  if (companies === undefined) return new Map(CONTROL_PLANS.map((plan) => [plan.table, everything]));
  const list = JSON.stringify(companies);
  const keys = new Set([
    ...(await source.grantedKeys(companies)),
    ...(files.control
      .prepare(
        'SELECT DISTINCT api_key_id FROM api_key_companies WHERE company_id IN (SELECT value FROM json_each(?))',
      )
      .pluck()
      .all(list) as string[]),
  ]);
  return new Map<string, Scope>([
    [
      'companies',
      {
        company: null,
        source: { where: 'id = ANY($1::uuid[])', params: [companies] },
        projection: { where: 'id IN (SELECT value FROM json_each(?))', params: [list] },
      },
    ],
    [
      'api_keys',
      {
        company: null,
        source: { where: 'id = ANY($1::uuid[])', params: [[...keys]] },
        projection: { where: 'id IN (SELECT value FROM json_each(?))', params: [JSON.stringify([...keys])] },
      },
    ],
    [
      'api_key_companies',
      {
        company: null,
        source: { where: 'company_id = ANY($1::uuid[])', params: [companies] },
        projection: { where: 'company_id IN (SELECT value FROM json_each(?))', params: [list] },
      },
    ],
  ]);
}
