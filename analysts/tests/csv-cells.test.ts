import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvRecord } from '../src/output/csv.ts';
import { runPda } from '../src/testing/run-pda.ts';

// CSV injection (OWASP "CSV Injection"): a text cell starting with = + - @ tab or CR is a formula
// to a spreadsheet. export and sql --format csv prefix it with ' by default; --raw-csv-cells
// writes it as it is (analysts/README.md, docs/analysts.md).

const CELLS = [
  '=HYPERLINK("http://x.example","y")',
  '+1+2',
  '-1+2',
  '@SUM(A1)',
  '\tx',
  '\rx',
  "'quoted",
  'plain',
];
const NEUTRAL = [
  '"\'=HYPERLINK(""http://x.example"",""y"")"',
  "'+1+2",
  "'-1+2",
  "'@SUM(A1)",
  "'\tx",
  '"\'\rx"',
  "'quoted",
  'plain',
];
const RAW = [
  '"=HYPERLINK(""http://x.example"",""y"")"',
  '+1+2',
  '-1+2',
  '@SUM(A1)',
  '\tx',
  '"\rx"',
  "'quoted",
  'plain',
];

let root: string;
let file: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pda-analysts-csv-'));
  file = join(root, 'cells.sqlite');
  const db = new Database(file);
  db.exec('CREATE TABLE cells (i INTEGER PRIMARY KEY, cell TEXT, n INTEGER, r REAL)');
  const insert = db.prepare('INSERT INTO cells (i, cell, n, r) VALUES (?, ?, ?, ?)');
  for (const [i, cell] of CELLS.entries()) insert.run(i, cell, -5, -0.5);
  db.close();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The data rows of a CSV output, each as `cell,n,r` (the cells hold no comma or line break but CR). */
const dataRows = (stdout: string): string[] => stdout.split('\r\n').slice(1, -1);

describe('CSV cells that a spreadsheet would run as formulas', () => {
  it('csvRecord: prefixed with a quote by default, as they are when asked; numbers never changed', () => {
    expect(CELLS.map((cell) => csvRecord([cell]).slice(0, -2))).toEqual(NEUTRAL);
    expect(CELLS.map((cell) => csvRecord([cell], { neutralise: false }).slice(0, -2))).toEqual(RAW);
    expect(csvRecord([-5, -0.5, null, '=x'])).toBe("-5,-0.5,,'=x\r\n");
    expect(csvRecord(['=name'])).toBe("'=name\r\n");
  });

  it('export --format csv neutralises them; --raw-csv-cells writes them as they are', async () => {
    const base = ['projections', 'export', '--file', file, '--table', 'cells', '--columns', 'cell,n,r'];
    const neutral = await runPda([...base, '--format', 'csv']);
    expect(neutral.code, neutral.stderr).toBe(0);
    expect(neutral.stdout.startsWith('cell,n,r\r\n')).toBe(true);
    expect(dataRows(neutral.stdout)).toEqual(NEUTRAL.map((cell) => `${cell},-5,-0.5`));

    const raw = await runPda([...base, '--format', 'csv', '--raw-csv-cells']);
    expect(raw.code, raw.stderr).toBe(0);
    expect(dataRows(raw.stdout)).toEqual(RAW.map((cell) => `${cell},-5,-0.5`));

    const wrongFormat = await runPda([...base, '--format', 'jsonl', '--raw-csv-cells']);
    expect(wrongFormat.code).toBe(2);
    expect(wrongFormat.stderr).toMatch(/^error: --raw-csv-cells is for --format csv\n/);
  });

  it('sql --format csv neutralises them, column names too; --raw-csv-cells writes them as they are', async () => {
    const sql = 'SELECT cell, n, r AS "=r" FROM cells ORDER BY i';
    const neutral = await runPda(['projections', 'sql', '--file', file, '--format', 'csv', sql]);
    expect(neutral.code, neutral.stderr).toBe(0);
    expect(neutral.stdout.startsWith("cell,n,'=r\r\n")).toBe(true);
    expect(dataRows(neutral.stdout)).toEqual(NEUTRAL.map((cell) => `${cell},-5,-0.5`));

    const raw = await runPda([
      'projections',
      'sql',
      '--file',
      file,
      '--format',
      'csv',
      '--raw-csv-cells',
      sql,
    ]);
    expect(raw.code, raw.stderr).toBe(0);
    expect(raw.stdout.startsWith('cell,n,=r\r\n')).toBe(true);
    expect(dataRows(raw.stdout)).toEqual(RAW.map((cell) => `${cell},-5,-0.5`));

    // The JSON and table formats are data for programs and people, not spreadsheets: unchanged.
    const json = await runPda(['projections', 'sql', '--file', file, '--format', 'json', sql]);
    expect((JSON.parse(json.stdout) as { cell: string }[]).map((row) => row.cell)).toEqual(CELLS);
  });
});
