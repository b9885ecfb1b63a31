import { UsageError } from '@pda/projections/cli';
import { type CliContext, type Command, parseCommandArgs, write } from '../cli/command.ts';
import { openSource, sourceFrom } from '../files/open-source.ts';
import { csvRecord } from '../output/csv.ts';
import { formatCount } from '../output/progress.ts';
import { formatTable } from '../output/text-table.ts';
import { prepareReadOnly } from '../sql/read-only-statement.ts';

const USAGE = `usage: pnpm pda projections sql (--company ID | --control | --file PATH) [--format table|csv|json] [--data-dir DIR] "SELECT …"
  Runs one read-only statement (SELECT, WITH, VALUES, EXPLAIN, PRAGMA without =) on a read-only
  connection; anything that would write is refused. A long query never blocks ingest (WAL).
  --company ID   that company's file           --control   control.sqlite
  --file PATH    a snapshot or analysis database (pda projections snapshot)
  --format       table (default; at most ${formatCount(1000)} rows shown), csv, or json (an array of objects)
  --data-dir DIR the projection data directory (default: $PDA_DATA_DIR)`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  company: { type: 'string' },
  control: { type: 'boolean' },
  file: { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = ['table', 'csv', 'json'] as const;
type Format = (typeof FORMATS)[number];
const TABLE_ROWS = 1_000;
const CHUNK_ROWS = 1_000;

function display(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Uint8Array) return `x'${Buffer.from(value).toString('hex')}'`;
  return String(value);
}

function jsonValue(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;
}

export const sqlCommand: Command = {
  name: 'sql',
  summary: 'one read-only SQL statement on a company file, control.sqlite or a snapshot',
  usage: USAGE,
  async run(args: string[], context: CliContext) {
    const parsed = await parseCommandArgs(args, OPTIONS, USAGE, context, Number.POSITIVE_INFINITY);
    if (!parsed) return;
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give the SQL as one argument (quote it)');
    const format = (values.format ?? 'table') as Format;
    if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
    const source = sourceFrom(values);
    const { db } = openSource(source, values['data-dir'], context.env);
    let rows: IterableIterator<unknown[]> | undefined;
    try {
      const statement = prepareReadOnly(db, positionals[0] ?? '');
      const names = statement.columns().map((column) => column.name);
      rows = statement.raw(true).iterate() as IterableIterator<unknown[]>;
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
          context.stdout,
          `${formatTable(names, shown)}\n(${formatCount(count)} row${count === 1 ? '' : 's'})${more}\n`,
        );
        return;
      }
      let text = format === 'csv' ? csvRecord(names) : '[';
      for (const row of rows) {
        text +=
          format === 'csv'
            ? csvRecord(row.map((value) => (value instanceof Uint8Array ? display(value) : value)))
            : `${count === 0 ? '\n' : ',\n'}${JSON.stringify(Object.fromEntries(names.map((n, i) => [n, jsonValue(row[i])])))}`;
        if (++count % CHUNK_ROWS === 0) {
          await write(context.stdout, text);
          text = '';
        }
      }
      await write(context.stdout, format === 'csv' ? text : `${text}${count === 0 ? ']' : '\n]'}\n`);
    } finally {
      rows?.return?.();
      db.close();
    }
  },
};
