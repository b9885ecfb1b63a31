// Removes companies with everything they own (and the API keys granted only to them), children
// first. For tests and demos sharing one database: unlike TRUNCATE it leaves other tenants alone.

import { withTransaction } from '@pda/operator-tools/pg';
import type { ClientBase } from 'pg';

const OWNED = ['site_contacts', 'sites', 'equipment', 'equipment_categories', 'consumables', 'services'];

export async function deleteCompanies(client: ClientBase, companyIds: readonly string[]): Promise<void> {
  if (companyIds.length === 0) return;
  await withTransaction(client, async () => {
    await client.query(
      `DELETE FROM api_keys k
        WHERE EXISTS (SELECT 1 FROM api_key_companies g WHERE g.api_key_id = k.id AND g.company_id = ANY($1::uuid[]))
          AND NOT EXISTS (SELECT 1 FROM api_key_companies g WHERE g.api_key_id = k.id AND g.company_id <> ALL($1::uuid[]))`,
      [companyIds],
    );
    await client.query('DELETE FROM api_key_companies WHERE company_id = ANY($1::uuid[])', [companyIds]);
    for (const table of OWNED) {
      await client.query(`DELETE FROM ${table} WHERE company_id = ANY($1::uuid[])`, [companyIds]);
    }
    await client.query('DELETE FROM companies WHERE id = ANY($1::uuid[])', [companyIds]);
  });
}
