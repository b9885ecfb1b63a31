import { columnNames, REPRESENTATION, RESOURCES } from '@pda/schemas/registry';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { RepresentationVersionError, valuesRenderer } from '../src/model/index.ts';
import { companyPath } from '../src/model/paths.ts';
import { documentRenderer, openCompanyReader } from '../src/read/index.ts';
import { makeUpsert, sampleRow } from '../src/testing/index.ts';
import { openCompanyWriter, ProjectionStore } from '../src/write/index.ts';
import { A, companyRows, fixedClock, id, tempDataDir } from './helpers.ts';

const SITE = id(1);

/** What the api would render from the stored columns: the document must equal it. */
function renderedFromColumns(row: Record<string, unknown>): string {
  return JSON.stringify(documentRenderer(RESOURCES.sites.document)(row));
}

function storeWithSite() {
  const dir = tempDataDir();
  const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock() });
  store.applyBatch([
    makeUpsert(
      'sites',
      sampleRow('sites', { id: SITE, company_id: A, name: 'North "yard"', area: 0.1, latitude: -0.000001 }),
      1,
    ),
  ]);
  return { dir, store };
}

function setInFile(dir: string, sql: string): void {
  const db = new Database(companyPath(dir, A));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

describe('stored documents', () => {
  it('the compiled renderer writes exactly what JSON.stringify of the rendered object writes', () => {
    const columns = columnNames('sites');
    const render = valuesRenderer('sites', columns)!;
    const awkward: Record<string, unknown> = {
      name: 'quote " backslash \\ newline \n tab \t nul \u0000 line-sep \u2028 emoji 🚜 é',
      notes: '</script><!-- -->',
      area: -0,
      latitude: 1e21,
      longitude: 5e-324,
      coordinates_accuracy: null,
      geocoded_at: null,
    };
    for (const fields of [{}, awkward]) {
      const row = { ...sampleRow('sites', { id: SITE, company_id: A }), ...fields } as Record<
        string,
        unknown
      >;
      expect(render(columns.map((column) => row[column]))).toBe(renderedFromColumns(row));
    }
  });

  it('an upsert stores the JSON the document shape renders from the row, exactly', () => {
    const { dir, store } = storeWithSite();
    const [row] = companyRows(dir, A, 'sites');
    expect(row?._json).toBe(renderedFromColumns(row!));
    expect(JSON.parse(row?._json as string)).toMatchObject({
      id: SITE,
      name: 'North "yard"',
      area: 0.1,
      coordinates: { latitude: -0.000001 },
    });
    store.close();
  });

  it('an update without a TOASTed column renders the stored value, not an empty one', () => {
    const { dir, store } = storeWithSite();
    const stored = companyRows(dir, A, 'sites')[0]!.notes;
    expect(stored).not.toBe('');
    store.applyBatch([
      makeUpsert('sites', sampleRow('sites', { id: SITE, company_id: A, name: 'Renamed' }), 2, {
        op: 'u',
        unavailable: ['notes'],
      }),
    ]);
    const [row] = companyRows(dir, A, 'sites');
    expect(JSON.parse(row?._json as string)).toMatchObject({ name: 'Renamed', notes: stored });
    expect(row?._json).toBe(renderedFromColumns(row!));
    store.close();
  });

  it('an older representation is re-rendered from the columns when ingest opens the file', () => {
    const { dir, store } = storeWithSite();
    store.close();
    setInFile(dir, `UPDATE sites SET _json = '{"stale":true}'; UPDATE meta SET representation = 0`);
    expect(() => openCompanyReader(dir, A)).toThrow(RepresentationVersionError);

    openCompanyWriter(dir, A).close();
    const [row] = companyRows(dir, A, 'sites');
    expect(row?._json).toBe(renderedFromColumns(row!));
    const db = openCompanyReader(dir, A);
    expect(db.prepare('SELECT representation FROM meta').pluck().get()).toBe(REPRESENTATION.version);
    db.close();
  });

  it('a newer representation is refused by both sides and left untouched', () => {
    const { dir, store } = storeWithSite();
    store.close();
    setInFile(dir, `UPDATE meta SET representation = ${REPRESENTATION.version + 1}`);
    for (const open of [openCompanyReader, openCompanyWriter]) {
      let error: unknown;
      try {
        open(dir, A).close();
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(RepresentationVersionError);
      expect((error as RepresentationVersionError).code).toBe('projection_too_new');
    }
    const db = new Database(companyPath(dir, A), { readonly: true });
    expect(db.prepare('SELECT representation FROM meta').pluck().get()).toBe(REPRESENTATION.version + 1);
    db.close();
  });
});
