import type { CompanyFile } from '../files/company-file.ts';

/**
 * Embedded relations move their parent's change time (docs/architecture.md#change-time-and-updated_since):
 * a partner syncing sites with include=contacts, or equipment with include=category, must see the
 * parent again when only the embedded part changed. One fresh change time per touch; the rows a
 * touch updates share it.
 */

export function touchSite(file: CompanyFile, siteId: string): void {
  file.statements
    .get('touch:site', () => 'UPDATE sites SET _changed_us = ? WHERE id = ?')
    .run(file.nextChangeTime(), siteId);
}

export function touchEquipmentOfCategory(file: CompanyFile, categoryId: string): void {
  file.statements
    .get('touch:equipment', () => 'UPDATE equipment SET _changed_us = ? WHERE category_id = ?')
    .run(file.nextChangeTime(), categoryId);
}

/** After a TRUNCATE of the embedded table every parent changed. */
export function touchAllParents(file: CompanyFile, table: string): void {
  if (table === 'site_contacts') {
    file.statements
      .get('touch:all-sites', () => 'UPDATE sites SET _changed_us = ?')
      .run(file.nextChangeTime());
  } else if (table === 'equipment_categories') {
    file.statements
      .get('touch:all-equipment', () => 'UPDATE equipment SET _changed_us = ?')
      .run(file.nextChangeTime());
  }
}
