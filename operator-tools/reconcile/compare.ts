// The comparison itself, pure: rows of both sides in the projection's representation, as value
// arrays in the plan's column order (a projection row of a table with a stored document carries its
// `_json` text after them). No I/O here, so unit tests feed it row pairs directly.
import type { TablePlan } from './tables.ts';
import type { ColumnDifference, Difference } from './types.ts';

export type Values = readonly unknown[];

/** The stored document's name in a difference's columns. */
export const DOCUMENT_COLUMN = '_json';

/** A row's key as reported: its primary-key values joined by `/`. */
export function rowId(plan: TablePlan, row: Values): string {
  return plan.keyIndexes.map((i) => String(row[i])).join('/');
}

/** Orders two rows by primary key as both sides return them (uuid text: byte order = text order). */
export function compareKeys(plan: TablePlan, a: Values, b: Values): number {
  for (const i of plan.keyIndexes) {
    const x = String(a[i]);
    const y = String(b[i]);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** NULL is null on both sides; anything else must be the same type and value. */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || ((a === null || a === undefined) && (b === null || b === undefined));
}

/**
 * The columns of a row present on both sides that differ, then the stored document when the
 * table has one: the projection's `_json` against the document rendered from the source values by
 * the renderer ingest writes it with (so the comparison is byte for byte, member order included).
 */
export function columnDifferences(plan: TablePlan, source: Values, projection: Values): ColumnDifference[] {
  const differences: ColumnDifference[] = [];
  plan.columns.forEach((name, i) => {
    if (!sameValue(source[i], projection[i])) {
      differences.push({ name, source: source[i] ?? null, projection: projection[i] ?? null });
    }
  });
  if (plan.render) {
    const expected = plan.render(source);
    const stored = projection[plan.columns.length] ?? null;
    if (stored !== expected)
      differences.push({ name: DOCUMENT_COLUMN, source: expected, projection: stored });
  }
  return differences;
}

/** The difference of one key, or undefined when both sides agree (a row on neither side agrees). */
export function compareRow(
  plan: TablePlan,
  companyId: string | null,
  source: Values | undefined,
  projection: Values | undefined,
): Difference | undefined {
  if (source === undefined && projection === undefined) return undefined;
  const table = plan.table;
  if (projection === undefined) return { companyId, table, id: rowId(plan, source!), kind: 'missing' };
  if (source === undefined) return { companyId, table, id: rowId(plan, projection), kind: 'extra' };
  const columns = columnDifferences(plan, source, projection);
  return columns.length === 0
    ? undefined
    : { companyId, table, id: rowId(plan, source), kind: 'different', columns };
}

/** Rows of one side in key order, a batch at a time. */
export type RowBatches = AsyncIterable<readonly Values[]> | Iterable<readonly Values[]>;

export interface MergeCounts {
  sourceRows: number;
  projectionRows: number;
}

/** A pull cursor over batches of rows. */
class Cursor {
  private readonly batches: AsyncIterator<readonly Values[]> | Iterator<readonly Values[]>;
  private batch: readonly Values[] = [];
  private index = 0;
  private ended = false;
  count = 0;

  constructor(batches: RowBatches) {
    this.batches =
      Symbol.asyncIterator in batches
        ? (batches as AsyncIterable<readonly Values[]>)[Symbol.asyncIterator]()
        : (batches as Iterable<readonly Values[]>)[Symbol.iterator]();
  }

  /** The current row, undefined at the end. */
  async peek(): Promise<Values | undefined> {
    while (this.index >= this.batch.length) {
      if (this.ended) return undefined;
      const next = await this.batches.next();
      if (next.done) {
        this.ended = true;
        return undefined;
      }
      this.batch = next.value;
      this.index = 0;
    }
    return this.batch[this.index];
  }

  advance(): void {
    this.index++;
    this.count++;
  }
}

/**
 * Merge-joins the two sides, both sorted by key, reporting every difference to `onDifference` and
 * each row read to `onRow` (progress). Memory: one batch per side.
 */
export async function mergeCompare(
  plan: TablePlan,
  companyId: string | null,
  source: RowBatches,
  projection: RowBatches,
  onDifference: (difference: Difference) => void,
  onRow?: (sourceRows: number) => void,
): Promise<MergeCounts> {
  const s = new Cursor(source);
  const p = new Cursor(projection);
  for (;;) {
    const a = await s.peek();
    const b = await p.peek();
    if (a === undefined && b === undefined) break;
    const order = a === undefined ? 1 : b === undefined ? -1 : compareKeys(plan, a, b);
    const difference = compareRow(plan, companyId, order <= 0 ? a : undefined, order >= 0 ? b : undefined);
    if (difference) onDifference(difference);
    if (order <= 0) {
      s.advance();
      onRow?.(s.count);
    }
    if (order >= 0) p.advance();
  }
  return { sourceRows: s.count, projectionRows: p.count };
}
