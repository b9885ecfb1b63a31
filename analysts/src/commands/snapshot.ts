import { UsageError, userPath } from '@pda/projections/cli';
import { type CliContext, type Command, note, parseCommandArgs } from '../cli/command.ts';
import { resolveDataDir } from '../files/data-dir.ts';
import { sourcePath } from '../files/open-source.ts';
import { buildAnalysisDatabase } from '../snapshot/analysis-database.ts';
import { copyProjectionFile } from '../snapshot/copy-file.ts';
import { formatBytes } from './companies.ts';

const USAGE = `usage: pnpm pda projections snapshot (--company ID | --control | --all) --out FILE [--data-dir DIR] [--force]
  A consistent copy taken while ingest writes, without blocking it (a read transaction in WAL mode).
  --company ID   copy that company's file (VACUUM INTO: same tables, rows and schema version)
  --control      copy control.sqlite
  --all          one analysis database of every company's rows, each table with a company_id
                 column, and a companies table (progress on stderr: rows/s, ETA)
  --out FILE     the file to write (refused if it exists, unless --force)
  --data-dir DIR the projection data directory (default: $PDA_DATA_DIR)`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  company: { type: 'string' },
  control: { type: 'boolean' },
  all: { type: 'boolean' },
  out: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const snapshotCommand: Command = {
  name: 'snapshot',
  summary: 'a consistent copy of a company file, control.sqlite, or --all companies in one analysis database',
  usage: USAGE,
  async run(args: string[], context: CliContext) {
    const parsed = await parseCommandArgs(args, OPTIONS, USAGE, context);
    if (!parsed) return;
    const { values } = parsed;
    const chosen = [values.company !== undefined, values.control === true, values.all === true].filter(
      Boolean,
    );
    if (chosen.length !== 1)
      throw new UsageError('name what to copy: exactly one of --company ID, --control or --all');
    if (values.out === undefined || values.out === '') throw new UsageError('--out FILE is required');
    const out = userPath(values.out);
    const force = values.force === true;
    if (values.all) {
      const dataDir = resolveDataDir(values['data-dir'], context.env);
      buildAnalysisDatabase(dataDir, out, {
        force,
        write: (line) => note(context, line),
        nowMs: context.now,
      });
      return;
    }
    const source =
      values.company !== undefined
        ? { kind: 'company' as const, companyId: values.company }
        : { kind: 'control' as const };
    const path = sourcePath(source, values['data-dir'], context.env);
    const { bytes, seconds } = copyProjectionFile(path, out, { force });
    note(context, `snapshot: ${path} → ${out} (${formatBytes(bytes)} in ${seconds.toFixed(2)} s)`);
  },
};
