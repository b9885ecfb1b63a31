import { quoteIdent } from '../quote-ident.ts';
import type { CompanyFiles } from './company-files.ts';
import type { ControlFile } from './control-file.ts';
import type { ControlOp } from './plan.ts';
import type { Outcome } from './result.ts';
import { tableSpec } from './table-spec.ts';
import { removeTombstone, tombstoneLsn, writeControlTombstone } from './tombstones.ts';
import { upsertStatement } from './upsert-statement.ts';

/**
 * The control-table operations (companies, api_keys, api_key_companies) with the same version
 * guard and tombstones as tenant rows. A company row that is applied gets its file created
 * (migrated, meta row), so the api never sees a company without one.
 */
export function applyControlOp(control: ControlFile, files: CompanyFiles, op: ControlOp): Outcome {
  const { statements } = control;
  const floor = control.floors.get(op.table);
  if (op.kind !== 'truncate' && floor !== undefined && op.lsn <= floor) return 'skipped';
  switch (op.kind) {
    case 'upsert': {
      const tombstone = tombstoneLsn(statements, op.table, op.key);
      if (tombstone !== undefined && op.lsn <= tombstone) return 'skipped';
      const spec = tableSpec('control', op.table);
      if (upsertStatement(statements, spec, op.missing).run(...op.values, op.lsn).changes === 0)
        return 'skipped';
      if (tombstone !== undefined) removeTombstone(statements, op.table, op.key);
      if (op.table === 'companies') files.get(op.key);
      return 'applied';
    }
    case 'delete': {
      const tombstone = tombstoneLsn(statements, op.table, op.key);
      if (tombstone !== undefined && op.lsn <= tombstone) return 'skipped';
      const spec = tableSpec('control', op.table);
      const where = spec.pk.map((c) => `${quoteIdent(c)} = ?`).join(' AND ');
      const stored = statements
        .get(`control:get:${op.table}`, () => `SELECT _src_lsn FROM ${quoteIdent(op.table)} WHERE ${where}`)
        .pluck()
        .get(...op.keyValues) as number | undefined;
      if (stored !== undefined && op.lsn <= stored) return 'skipped';
      statements
        .get(`control:delete:${op.table}`, () => `DELETE FROM ${quoteIdent(op.table)} WHERE ${where}`)
        .run(...op.keyValues);
      writeControlTombstone(statements, op.table, op.key, op.lsn);
      return 'applied';
    }
    case 'truncate': {
      if (floor !== undefined && op.lsn <= floor) return 'skipped';
      // Tenant tables: the floor, and their unrouted tombstones at or below it (the floor guards
      // those); their routes are cleared before routes are written.
      if (op.table === 'companies' || op.table === 'api_keys' || op.table === 'api_key_companies') {
        statements.get(`control:truncate:${op.table}`, () => `DELETE FROM ${quoteIdent(op.table)}`).run();
        statements
          .get('control:truncate:tombstones', () => 'DELETE FROM tombstones WHERE table_name = ?')
          .run(op.table);
      } else {
        statements
          .get(
            'control:truncate:unrouted',
            () => 'DELETE FROM tombstones WHERE table_name = ? AND _src_lsn <= ?',
          )
          .run(op.table, op.lsn);
      }
      statements
        .get(
          'control:floor',
          () =>
            `INSERT INTO truncations (table_name, _src_lsn) VALUES (?, ?)
             ON CONFLICT (table_name) DO UPDATE SET _src_lsn = excluded._src_lsn`,
        )
        .run(op.table, op.lsn);
      control.floors.set(op.table, op.lsn);
      return 'applied';
    }
  }
}
