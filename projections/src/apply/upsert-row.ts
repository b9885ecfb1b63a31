import { withCarried } from './carry.ts';
import type { SqlValue } from './coerce.ts';
import type { CompanyFile } from './company-file.ts';
import type { CompanyOp } from './plan.ts';
import type { Outcome } from './result.ts';
import { renderDocument, rerenderStored } from './stored-document.ts';
import { tableSpec } from './table-spec.ts';
import { removeTombstone } from './tombstones.ts';
import { touchEquipmentOfCategory, touchSite } from './touch-parents.ts';
import { upsertStatement } from './upsert-statement.ts';

type UpsertOp = Extract<CompanyOp, { kind: 'upsert' }>;

/**
 * Guarded upsert of a tenant row into its company file. Skipped when the change is at or below the
 * table's TRUNCATE floor, the row's tombstone, or the stored row's _src_lsn. A newer upsert removes
 * the tombstone (the row exists again). A contact moves its site(s); a category its equipment.
 * `carried`: the values of `op.carry`'s columns read from the file the row left (carry.ts).
 */
export function upsertRow(file: CompanyFile, op: UpsertOp, carried?: readonly SqlValue[]): Outcome {
  const { table, id, lsn } = op;
  const floor = file.floors.get(table);
  if (floor !== undefined && lsn <= floor) return 'skipped';
  const tombstone = file.tombstoneLsn(table, id);
  if (tombstone !== undefined && lsn <= tombstone) return 'skipped';

  // A contact may change site: both the old and the new site must move (include=contacts).
  let previousSite: string | undefined;
  if (table === 'site_contacts') {
    const stored = file.statements
      .get('contact:get', () => 'SELECT site_id, _src_lsn FROM site_contacts WHERE id = ?')
      .raw()
      .get(id) as [string, number] | undefined;
    if (stored !== undefined && lsn <= stored[1]) return 'skipped';
    previousSite = stored?.[0];
  }

  const spec = tableSpec('company', table);
  const { values, missing } = withCarried(spec, op, carried);
  const statement = upsertStatement(file.statements, spec, missing);
  const info = spec.hasDocument
    ? statement.run(...values, lsn, file.nextChangeTime(), renderDocument(spec, values))
    : statement.run(...values, lsn, file.nextChangeTime());
  if (info.changes === 0) return 'skipped';
  if (tombstone !== undefined) removeTombstone(file.statements, table, id);
  // Columns the change did not carry kept their stored values: render from the stored row.
  if (spec.hasDocument && missing.length > 0) rerenderStored(file, spec, id);

  if (table === 'site_contacts') {
    const siteId = missing.includes('site_id') ? previousSite : op.change.row.site_id;
    if (typeof siteId === 'string') touchSite(file, siteId);
    if (previousSite !== undefined && previousSite !== siteId) touchSite(file, previousSite);
  } else if (table === 'equipment_categories') {
    touchEquipmentOfCategory(file, id);
  }
  return 'applied';
}
