import { quoteIdent } from '../quote-ident.ts';
import type { CompanyFile } from './company-file.ts';
import type { CompanyOp } from './plan.ts';
import type { Outcome } from './result.ts';
import { touchEquipmentOfCategory, touchSite } from './touch-parents.ts';

type DeleteOp = Extract<CompanyOp, { kind: 'delete' }>;

/**
 * Guarded delete of a tenant row: skipped at or below the TRUNCATE floor, the stored row's
 * _src_lsn or an existing tombstone; otherwise the row goes and a tombstone at this position stays
 * (also when the row was never here: a late older upsert must still be refused).
 */
export function deleteRow(file: CompanyFile, op: DeleteOp): Outcome {
  const { table, id, lsn } = op;
  const floor = file.floors.get(table);
  if (floor !== undefined && lsn <= floor) return 'skipped';
  const tombstone = file.tombstoneLsn(table, id);
  if (tombstone !== undefined && lsn <= tombstone) return 'skipped';

  const t = quoteIdent(table);
  const stored = file.statements
    .get(`delete:get:${table}`, () =>
      table === 'site_contacts'
        ? 'SELECT _src_lsn, site_id FROM site_contacts WHERE id = ?'
        : `SELECT _src_lsn, NULL FROM ${t} WHERE id = ?`,
    )
    .raw()
    .get(id) as [number, string | null] | undefined;
  if (stored !== undefined && lsn <= stored[0]) return 'skipped';

  if (stored !== undefined) {
    file.statements.get(`delete:row:${table}`, () => `DELETE FROM ${t} WHERE id = ?`).run(id);
  }
  file.writeTombstone(table, id, lsn, file.nextChangeTime());

  if (table === 'site_contacts' && typeof stored?.[1] === 'string') touchSite(file, stored[1]);
  else if (table === 'equipment_categories') touchEquipmentOfCategory(file, id);
  return 'applied';
}
