import type { TenantTable } from '../../model/change.ts';
import type { TableSpec } from '../files/table-spec.ts';
import type { SqlValue } from './coerce.ts';

/** A tenant row's column values as the batch knows them so far (see KnownValues). */
export interface KnownRow {
  readonly lsn: number;
  /** The values after the row's latest upsert in the batch (TableSpec.columns order). */
  readonly values: readonly SqlValue[];
  /** Columns no change of the batch carried: their value is the one stored in `origin`. */
  readonly unknown: readonly string[];
  /** The company file that held the row before the batch; undefined: none did (or it was deleted). */
  readonly origin: string | undefined;
}

/** The row was deleted at `lsn` earlier in the batch. */
interface Deleted {
  readonly lsn: number;
  readonly deleted: true;
}

const NONE: readonly string[] = [];

/**
 * Planning scratch: what the batch knows of each tenant row's column values, change after change. A
 * moved row must arrive with every column, but an update leaves unchanged TOASTed columns out
 * (`unavailable`, ingest/README.md "Decoding decisions"), and the receiving file has no stored row
 * to keep them from. They are then taken from the batch's own earlier upserts of the row, or else
 * from the row stored in the file that held it before the batch (`origin`, read at apply time:
 * apply-company.ts readCarried). Only read by moves; a delete forgets the row, a TRUNCATE its
 * table.
 */
export class KnownValues {
  readonly #rows = new Map<TenantTable, Map<string, KnownRow | Deleted>>();

  /**
   * The row after an upsert with `values` and `missing` columns: missing ones filled from the
   * batch's earlier upserts where one carried them. `routed`: the company the route names now.
   */
  after(
    spec: TableSpec,
    id: string,
    lsn: number,
    values: readonly SqlValue[],
    missing: readonly string[],
    routed: string | undefined,
  ): KnownRow {
    const table = spec.table as TenantTable;
    const prior = this.#rows.get(table)?.get(id);
    // No earlier change of the row in this batch: before the batch it was where its route says.
    if (prior === undefined) return { lsn, values, unknown: missing, origin: routed };
    // Deleted earlier in the batch: nothing is left to take a value from.
    if ('deleted' in prior) return { lsn, values, unknown: missing, origin: undefined };
    if (missing.length === 0) return { lsn, values, unknown: NONE, origin: prior.origin };
    const merged = values.slice();
    const unknown: string[] = [];
    for (const column of missing) {
      if (prior.unknown.includes(column)) unknown.push(column);
      else {
        const i = spec.columns.findIndex((c) => c.name === column);
        merged[i] = prior.values[i] ?? null;
      }
    }
    return { lsn, values: merged, unknown, origin: prior.origin };
  }

  /** Records a planned upsert; an older change than the row's latest leaves it as it is. */
  set(table: TenantTable, id: string, row: KnownRow): void {
    this.#put(table, id, row);
  }

  /** A planned delete: a later create of the same id starts from nothing. */
  deleted(table: TenantTable, id: string, lsn: number): void {
    this.#put(table, id, { lsn, deleted: true });
  }

  /** A TRUNCATE: the table's rows are gone and their routes forgotten. */
  truncated(table: TenantTable): void {
    this.#rows.delete(table);
  }

  #put(table: TenantTable, id: string, row: KnownRow | Deleted): void {
    let rows = this.#rows.get(table);
    if (!rows) {
      rows = new Map();
      this.#rows.set(table, rows);
    }
    const prior = rows.get(id);
    // A row at the position of a delete replaces it: the `c` of a partitioned move after its `d`
    // (same position, plan-tenant.ts isMovePairCreate).
    if (
      prior === undefined ||
      row.lsn > prior.lsn ||
      (row.lsn === prior.lsn && 'deleted' in prior && !('deleted' in row))
    )
      rows.set(id, row);
  }
}
