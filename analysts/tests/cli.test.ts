import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPda } from '../src/testing/run-pda.ts';
import { seedProjection } from '../src/testing/seed-projection.ts';

// The CLI as a process, on a projection built from the dev world's seed generator through ProjectionStore.

const COUNTS = {
  companies: 2,
  sites: 30,
  contactsPerSite: 1,
  services: 6,
  categories: 4,
  equipment: 10,
  consumables: 5,
};
let root: string;
let dataDir: string;
let companyIds: string[];
const env = (): Record<string, string> => ({ PDA_DATA_DIR: dataDir });

function rowsOf(path: string, sql: string): Record<string, unknown>[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pda-analysts-cli-'));
  dataDir = join(root, 'data');
  seedProjection(dataDir, { counts: COUNTS });
  companyIds = rowsOf(join(dataDir, 'control.sqlite'), 'SELECT id FROM companies ORDER BY id').map((r) =>
    String(r.id),
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('pda projections: the process contract', () => {
  it('--help on the tool and on every command: the usage on stdout, exit 0', async () => {
    const top = await runPda(['projections', '--help']);
    expect(top).toMatchObject({ code: 0, stderr: '' });
    const commands = ['companies', 'describe', 'snapshot', 'export', 'sql'];
    const helps = await Promise.all(commands.map((command) => runPda(['projections', command, '--help'])));
    commands.forEach((command, i) => {
      expect(top.stdout).toContain(`  ${command} `);
      expect(helps[i]?.code, command).toBe(0);
      expect(helps[i]?.stdout, command).toMatch(new RegExp(`^usage: pnpm pda projections ${command}`));
    });
  });

  it('bad arguments: one error line and the usage on stderr, exit 2', async () => {
    const cases: string[][] = [
      ['projections'],
      ['projections', 'nope'],
      ['elsewhere', 'companies'],
      ['projections', 'companies', '--bogus'],
      ['projections', 'companies', 'extra'],
      ['projections', 'sql', '--company', 'not-a-uuid', 'SELECT 1'],
      ['projections', 'sql', 'SELECT 1'],
      ['projections', 'sql', '--company', companyIds[0] ?? '', '--format', 'xml', 'SELECT 1'],
      ['projections', 'export', '--company', companyIds[0] ?? '', '--table', 'sites'],
      ['projections', 'export', '--company', companyIds[0] ?? '', '--table', 'nope', '--format', 'csv'],
      ['projections', 'snapshot', '--all'],
      ['projections', 'snapshot', '--all', '--company', companyIds[0] ?? '', '--out', join(root, 'x.sqlite')],
      ['projections', 'describe', 'nope'],
    ];
    const results = await Promise.all(cases.map((args) => runPda(args, env())));
    cases.forEach((args, i) => {
      expect(results[i]?.code, args.join(' ')).toBe(2);
      expect(results[i]?.stderr, args.join(' ')).toMatch(/^error: [^\n]+\n\nusage: /);
      expect(results[i]?.stderr).not.toMatch(/\n\s+at /);
    });
  });

  it('no data directory, a missing one, a missing company file: one line, exit 1 (2 when none is named)', async () => {
    expect(await runPda(['projections', 'companies'])).toMatchObject({ code: 2 });
    const missing = await runPda(['projections', 'companies', '--data-dir', join(root, 'nowhere')]);
    expect(missing).toMatchObject({
      code: 1,
      stderr: `error: data directory ${join(root, 'nowhere')} does not exist\n`,
    });
    const absent = await runPda(
      ['projections', 'sql', '--company', '00000000-0000-4000-8000-000000000000', 'SELECT 1'],
      env(),
    );
    expect(absent.code).toBe(1);
    expect(absent.stderr).toMatch(/^error: projection file not found: .+\n$/);
  });
});

describe('pda projections companies', () => {
  it('lists every company file with its rows per table, versions and last change; --json', async () => {
    const result = await runPda(['projections', 'companies', '--json'], env());
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      companies: {
        id: string;
        name: string;
        file: {
          rows: Record<string, number>;
          schemaVersion: number;
          representation: number;
          lastChangedAt: string;
        };
      }[];
      ingest: { sourceCurrentAt: string | null; lagSeconds: number | null };
    };
    expect(summary.companies.map((company) => company.id)).toEqual(companyIds);
    for (const company of summary.companies) {
      expect(company.name).toBeTruthy();
      expect(company.file).toMatchObject({
        schemaVersion: 7,
        representation: 1,
        rows: {
          sites: 30,
          site_contacts: 30,
          services: 6,
          equipment_categories: 4,
          equipment: 10,
          consumables: 5,
          tombstones: 0,
        },
      });
      expect(company.file.lastChangedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
    expect(summary.ingest.lagSeconds).toBeGreaterThan(0);
    const text = await runPda(['projections', 'companies'], env());
    expect(text.stdout).toMatch(/2 company files, control\.sqlite schema 5\ningest: last batch /);
    expect(text.stdout).toContain(companyIds[1]);
  });
});

describe('pda projections describe', () => {
  it('prints the dictionary: the tables, one table with its columns, JSON', async () => {
    const list = await runPda(['projections', 'describe']);
    expect(list.stdout).toMatch(/company\s+sites\s+\/v1\/sites\s+Serviced sites/);
    const sites = await runPda(['projections', 'describe', 'sites']);
    expect(sites.stdout).toMatch(/city\s+TEXT NOT NULL\s+\/v1\/sites address\.city\s+city or town/);
    const json = JSON.parse((await runPda(['projections', 'describe', 'routes', '--format', 'json'])).stdout);
    expect(json).toMatchObject({ name: 'routes', file: 'control' });
  });
});

describe('pda projections snapshot', () => {
  it('--company: a consistent, checked copy of the file at the same schema version', async () => {
    const out = join(root, 'one.sqlite');
    const result = await runPda(
      ['projections', 'snapshot', '--company', companyIds[0] ?? '', '--out', out],
      env(),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^snapshot: .+ → .+one\.sqlite \(\d/);
    expect(rowsOf(out, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    expect(rowsOf(out, 'PRAGMA user_version')).toEqual([{ user_version: 7 }]);
    expect(rowsOf(out, 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'delete' }]);
    expect(rowsOf(out, 'SELECT count(*) AS n FROM sites')).toEqual([{ n: 30 }]);
    // An existing file is not replaced without --force.
    const again = await runPda(
      ['projections', 'snapshot', '--company', companyIds[0] ?? '', '--out', out],
      env(),
    );
    expect(again).toMatchObject({
      code: 1,
      stderr: `error: ${out} exists (remove it, or pass --force to replace it)\n`,
    });
    expect(
      (await runPda(['projections', 'snapshot', '--control', '--out', out, '--force'], env())).code,
    ).toBe(0);
    expect(rowsOf(out, 'SELECT count(*) AS n FROM companies')).toEqual([{ n: 2 }]);
  });

  it('--all: one analysis database, every row with its company_id, a companies table, relations declared', async () => {
    const out = join(root, 'all.sqlite');
    const result = await runPda(['projections', 'snapshot', '--all', '--out', out], env());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^snapshot --all: 170 rows in .+ from 2 company files → /m);
    expect(rowsOf(out, 'SELECT company_id, count(*) AS n FROM sites GROUP BY 1 ORDER BY 1')).toEqual(
      companyIds.map((id) => ({ company_id: id, n: 30 })),
    );
    expect(rowsOf(out, 'SELECT id, schema_version FROM companies ORDER BY id')).toEqual(
      companyIds.map((id) => ({ id, schema_version: 7 })),
    );
    expect(
      rowsOf(out, 'SELECT "table", "from", "to" FROM pragma_foreign_key_list(\'equipment\') ORDER BY 1'),
    ).toEqual([
      { table: 'companies', from: 'company_id', to: 'id' },
      { table: 'equipment_categories', from: 'category_id', to: 'id' },
    ]);
    // Every equipment row finds its category in the same company.
    expect(
      rowsOf(
        out,
        'SELECT count(*) AS n FROM equipment e JOIN equipment_categories c ON c.company_id = e.company_id AND c.id = e.category_id',
      ),
    ).toEqual([{ n: 20 }]);
    expect(rowsOf(out, 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'delete' }]);
    expect(rowsOf(out, "SELECT count(*) AS n FROM pragma_table_info('sites') WHERE name = '_json'")).toEqual([
      { n: 0 },
    ]);
  });
});

describe('pda projections export', () => {
  const file = (): string => join(dataDir, 'companies', `${companyIds[0]}.sqlite`);

  it('csv and jsonl on stdout: a header and every row; --columns picks and orders', async () => {
    const csv = await runPda(
      ['projections', 'export', '--company', companyIds[0] ?? '', '--table', 'services', '--format', 'csv'],
      env(),
    );
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'id,name,name_for_operators,client_description,color,client_charge_type,client_rate_amount,client_rate_currency,client_minimum_minutes,subcontractor_charge_type,subcontractor_rate_amount,subcontractor_rate_currency,subcontractor_minimum_minutes,created_at,updated_at,_src_lsn,_changed_us',
    );
    expect(lines).toHaveLength(7);
    expect(csv.stderr).toMatch(/^export services: 6 rows in /);
    const jsonl = await runPda(
      [
        'projections',
        'export',
        '--company',
        companyIds[0] ?? '',
        '--table',
        'sites',
        '--format',
        'jsonl',
        '--columns',
        'id,area,notes',
      ],
      env(),
    );
    const rows = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toEqual(rowsOf(file(), 'SELECT id, area, notes FROM sites'));
  });

  it('parquet: typed columns (INT64, DOUBLE, UTF-8, optional where NULL is allowed), read back equal', async () => {
    const out = join(root, 'sites.parquet');
    const result = await runPda(
      [
        'projections',
        'export',
        '--company',
        companyIds[0] ?? '',
        '--table',
        'sites',
        '--format',
        'parquet',
        '--out',
        out,
      ],
      env(),
    );
    expect(result.code, result.stderr).toBe(0);
    const bytes = readFileSync(out);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const metadata = parquetMetadata(buffer);
    const types = Object.fromEntries(
      metadata.schema.slice(1).map((e) => [e.name, `${e.type}/${e.repetition_type}`]),
    );
    expect(types).toMatchObject({
      id: 'BYTE_ARRAY/REQUIRED',
      area: 'DOUBLE/OPTIONAL',
      geocoded_at: 'BYTE_ARRAY/OPTIONAL',
      _changed_us: 'INT64/REQUIRED',
    });
    expect(metadata.key_value_metadata).toContainEqual({ key: 'pda.table', value: 'sites' });
    const read = await parquetReadObjects({ file: buffer });
    const expected = rowsOf(file(), 'SELECT * FROM sites').map(({ _json, ...row }) => ({
      ...row,
      _src_lsn: BigInt(row._src_lsn as number),
      _changed_us: BigInt(row._changed_us as number),
    }));
    expect(read).toEqual(expected);
  });
});

describe('pda projections sql', () => {
  it('prints a table, CSV or JSON', async () => {
    const id = companyIds[0] ?? '';
    const sql = 'SELECT client_charge_type, count(*) AS services FROM services GROUP BY 1 ORDER BY 1';
    const expected = rowsOf(join(dataDir, 'companies', `${id}.sqlite`), sql);
    const json = await runPda(['projections', 'sql', '--company', id, '--format', 'json', sql], env());
    expect(JSON.parse(json.stdout)).toEqual(expected);
    const table = await runPda(['projections', 'sql', '--company', id, sql], env());
    expect(table.stdout).toMatch(
      new RegExp(`^client_charge_type\\s+services\\n-+\\s+-+\\n[\\s\\S]*\\(${expected.length} rows\\)\\n$`),
    );
    const csv = await runPda(
      ['projections', 'sql', '--control', '--format', 'csv', 'SELECT count(*) AS n FROM companies'],
      env(),
    );
    expect(csv.stdout).toBe('n\r\n2\r\n');
    const empty = await runPda(
      ['projections', 'sql', '--control', '--format', 'json', 'SELECT id FROM companies WHERE 0'],
      env(),
    );
    expect(JSON.parse(empty.stdout)).toEqual([]);
  });
});
