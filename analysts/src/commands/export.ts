import { UsageError, userPath } from '@pda/projections/cli';
import { type CliContext, type Command, note, parseCommandArgs } from '../cli/command.ts';
import { EXPORT_FORMATS, type ExportFormat, exportTable } from '../export/export-table.ts';
import { openSource, sourceFrom } from '../files/open-source.ts';

const USAGE = `usage: pnpm pda projections export (--company ID | --control | --file PATH) --table T --format csv|jsonl|parquet [--out FILE] [--columns a,b] [--raw-csv-cells] [--data-dir DIR]
  One table, streamed as of one commit (progress on stderr: rows/s, ETA).
  --company ID   that company's file           --control   control.sqlite
  --file PATH    a snapshot or analysis database (pda projections snapshot)
  --table T      the table (pda projections describe lists them)
  --format       csv (RFC 4180, header row, NULL as empty), jsonl (one JSON object per line), parquet
  --out FILE     where to write (default: stdout; parquet needs a file)
  --columns a,b  only these columns, in this order (default: all but the stored _json documents)
  --raw-csv-cells
                 CSV: text cells starting with = + - @ tab or CR as they are (default: with a
                 leading ' so that a spreadsheet shows them as text and never runs them as formulas)
  --data-dir DIR the projection data directory (default: $PDA_DATA_DIR)`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  company: { type: 'string' },
  control: { type: 'boolean' },
  file: { type: 'string' },
  table: { type: 'string' },
  format: { type: 'string' },
  out: { type: 'string' },
  columns: { type: 'string' },
  'raw-csv-cells': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const exportCommand: Command = {
  name: 'export',
  summary: 'one table as CSV, JSON Lines or Parquet, streamed with progress',
  usage: USAGE,
  async run(args: string[], context: CliContext) {
    const parsed = await parseCommandArgs(args, OPTIONS, USAGE, context);
    if (!parsed) return;
    const { values } = parsed;
    if (values.table === undefined || values.table === '') throw new UsageError('--table T is required');
    const format = values.format as ExportFormat | undefined;
    if (format === undefined || !EXPORT_FORMATS.includes(format)) {
      throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
    }
    if (values['raw-csv-cells'] === true && format !== 'csv') {
      throw new UsageError('--raw-csv-cells is for --format csv');
    }
    const source = sourceFrom(values);
    const columns = values.columns
      ?.split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const { db, label } = openSource(source, values['data-dir'], context.env);
    try {
      await exportTable({
        db,
        label,
        table: values.table,
        columns,
        format,
        rawCsvCells: values['raw-csv-cells'] === true,
        out: values.out === undefined ? null : userPath(values.out),
        stdout: context.stdout,
        writeNote: (line) => note(context, line),
      });
    } finally {
      db.close();
    }
  },
};
