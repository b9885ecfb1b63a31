import type { Writable } from 'node:stream';
import type Database from 'better-sqlite3';
import { write } from '../cli/command.ts';
import { csvRecord } from '../output/csv.ts';
import { formatCount } from '../output/progress.ts';
import { formatTable } from '../output/text-table.ts';

/** How the `sql` command prints its rows. */
export const SQL_FORMATS = ['table', 'csv', 'json'] as const;
export type SqlFormat = (typeof SQL_FORMATS)[number];

export interface SqlOutput {
  readonly format: SqlFormat;
  /** CSV: text cells that start like a formula as they are (output/csv.ts). */
  readonly rawCsvCells: boolean;
}

export const TABLE_ROWS = 1_000;
const CHUNK_ROWS = 1_000;

function display(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Uint8Array) return `x'${Buffer.from(value).toString('hex')}'`;
  return String(value);
}

function jsonValue(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;
}

/** Runs a checked statement (read-only-statement.ts) and streams its rows to `out`. */
export async function writeResult(
  statement: Database.Statement,
  output: SqlOutput,
  out: Writable,
): Promise<void> {
  const { format } = output;
  const names = statement.columns().map((column) => column.name);
  const rows = statement.raw(true).iterate() as IterableIterator<unknown[]>;
  try {
    let count = 0;
    if (format === 'table') {
      const shown: string[][] = [];
      for (const row of rows) {
        if (count++ < TABLE_ROWS) shown.push(row.map(display));
      }
      const more =
        count > TABLE_ROWS
          ? `\n… ${formatCount(count - TABLE_ROWS)} more rows (--format csv or json prints all)`
          : '';
      await write(
        out,
        `${formatTable(names, shown)}\n(${formatCount(count)} row${count === 1 ? '' : 's'})${more}\n`,
      );
      return;
    }
    const csv = { neutralise: !output.rawCsvCells };
    let text = format === 'csv' ? csvRecord(names, csv) : '[';
    for (const row of rows) {
      text +=
        format === 'csv'
          ? csvRecord(
              row.map((value) => (value instanceof Uint8Array ? display(value) : value)),
              csv,
            )
          : `${count === 0 ? '\n' : ',\n'}${JSON.stringify(Object.fromEntries(names.map((n, i) => [n, jsonValue(row[i])])))}`;
      if (++count % CHUNK_ROWS === 0) {
        await write(out, text);
        text = '';
      }
    }
    await write(out, format === 'csv' ? text : `${text}${count === 0 ? ']' : '\n]'}\n`);
  } finally {
    rows.return?.();
  }
}
