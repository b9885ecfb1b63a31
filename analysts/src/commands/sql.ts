import { UsageError, wholeNumber } from '@pda/projections/cli';
import { type CliContext, type Command, parseCommandArgs } from '../cli/command.ts';
import { openSource, sourceFrom } from '../files/open-source.ts';
import { formatCount } from '../output/progress.ts';
import { queryWithTimeout } from '../sql/query-with-timeout.ts';
import { prepareReadOnly } from '../sql/read-only-statement.ts';
import { SQL_FORMATS, type SqlFormat, TABLE_ROWS, writeResult } from '../sql/write-result.ts';

/** A query that runs longer is stopped; long work belongs on a snapshot (docs/analysts.md). */
const DEFAULT_TIMEOUT_S = 300;

const USAGE = `usage: pnpm pda projections sql (--company ID | --control | --file PATH) [--format table|csv|json] [--timeout S] [--raw-csv-cells] [--data-dir DIR] "SELECT …"
  Runs one read-only statement (SELECT, WITH, VALUES, EXPLAIN, PRAGMA without a value) on a
  read-only connection; anything that would write or change a setting is refused before it is
  prepared. A long query never blocks ingest (WAL).
  --company ID   that company's file           --control   control.sqlite
  --file PATH    a snapshot or analysis database (pda projections snapshot)
  --format       table (default; at most ${formatCount(TABLE_ROWS)} rows shown), csv, or json (an array of objects)
  --timeout S    stop the query after S seconds, exit 1 (default ${DEFAULT_TIMEOUT_S}; 0 = no limit)
  --raw-csv-cells
                 CSV: text cells starting with = + - @ tab or CR as they are (default: with a
                 leading ' so that a spreadsheet shows them as text and never runs them as formulas)
  --data-dir DIR the projection data directory (default: $PDA_DATA_DIR)`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  company: { type: 'string' },
  control: { type: 'boolean' },
  file: { type: 'string' },
  format: { type: 'string' },
  timeout: { type: 'string' },
  'raw-csv-cells': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const sqlCommand: Command = {
  name: 'sql',
  summary: 'one read-only SQL statement on a company file, control.sqlite or a snapshot',
  usage: USAGE,
  async run(args: string[], context: CliContext) {
    const parsed = await parseCommandArgs(args, OPTIONS, USAGE, context, Number.POSITIVE_INFINITY);
    if (!parsed) return;
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give the SQL as one argument (quote it)');
    const format = (values.format ?? 'table') as SqlFormat;
    if (!SQL_FORMATS.includes(format))
      throw new UsageError(`--format must be one of ${SQL_FORMATS.join(', ')}`);
    const rawCsvCells = values['raw-csv-cells'] === true;
    if (rawCsvCells && format !== 'csv') throw new UsageError('--raw-csv-cells is for --format csv');
    const timeoutS = wholeNumber('timeout', values.timeout, DEFAULT_TIMEOUT_S);
    const sql = positionals[0] ?? '';
    const output = { format, rawCsvCells };
    const { db, path } = openSource(sourceFrom(values), values['data-dir'], context.env);
    try {
      // Checked here, so a refused statement is a usage error of this process, with or without a timeout.
      const statement = prepareReadOnly(db, sql);
      if (timeoutS === 0) {
        await writeResult(statement, output, context.stdout);
        return;
      }
    } finally {
      db.close();
    }
    await queryWithTimeout({ path, sql, output }, timeoutS, context);
  },
};
