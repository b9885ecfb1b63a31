import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLES } from '@pda/schemas/registry';
import { afterAll, describe, expect, test } from 'vitest';
import { TENANT_TABLES } from '../src/model/change.ts';
import { openCompanyReader } from '../src/read/open-readers.ts';
import { buildProjection } from '../src/testing/build-projection.ts';
import { makeUpsert } from '../src/testing/make-change.ts';
import { generatedRow } from '../src/testing/sample-rows.ts';

// The fallback sample rows a new table gets (docs/adding-a-table.md): made from the registry's
// column types, they must apply through the real store and read back column for column.

const COMPANY = '00000000-0000-4000-8000-0000000000c9';
const ROW_ID = '00000000-0000-4000-8000-000000000001';
const dir = mkdtempSync(join(tmpdir(), 'pda-generated-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('generatedRow', () => {
  test.each([...TENANT_TABLES])('%s: every projected column, applied and read back unchanged', (table) => {
    const row = generatedRow(table);
    expect(Object.keys(row).sort()).toEqual(Object.keys(TABLES[table].columns).sort());

    const companies = makeUpsert('companies', { ...generatedRow('companies'), id: COMPANY }, 1);
    const upsert = makeUpsert(table, { ...row, id: ROW_ID, company_id: COMPANY }, 2);
    const result = buildProjection(dir, [companies, upsert]);
    expect(result.rejections).toEqual([]);
    expect(result.tables[table]?.applied).toBe(1);

    const db = openCompanyReader(dir, COMPANY);
    try {
      const stored = db.prepare(`SELECT * FROM "${table}" WHERE id = ?`).get(ROW_ID) as Record<
        string,
        unknown
      >;
      for (const [column, value] of Object.entries(row)) {
        expect(stored[column], column).toEqual(column === 'id' ? ROW_ID : value);
      }
    } finally {
      db.close();
    }
  });
});
