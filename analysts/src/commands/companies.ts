import { type CliContext, type Command, parseCommandArgs, write } from '../cli/command.ts';
import { resolveDataDir } from '../files/data-dir.ts';
import { COUNTED_TABLES, type DataDirSummary, summarizeDataDir } from '../inspect/company-summaries.ts';
import { formatCount, formatDuration } from '../output/progress.ts';
import { formatTable } from '../output/text-table.ts';

const USAGE = `usage: pnpm pda projections companies [--data-dir DIR] [--json]
  Every company of the data directory: its file's rows per table, size on disk (file + WAL),
  schema and representation version, last change time; and how far ingest is behind its source.
  --data-dir DIR  the projection data directory (default: $PDA_DATA_DIR)
  --json          one JSON document instead of a table`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function ingestLine(summary: DataDirSummary): string {
  const { ingest } = summary;
  if (!ingest) return 'ingest: no control.sqlite (nothing projected yet)';
  const lag = ingest.lagSeconds === null ? 'unknown' : formatDuration(ingest.lagSeconds);
  return `ingest: last batch ${ingest.lastBatchAt ?? 'never'}, source current at ${ingest.sourceCurrentAt ?? 'unknown'} (lag ${lag})`;
}

export function renderCompanies(summary: DataDirSummary): string {
  const files = summary.companies.filter((company) => company.file !== null).length;
  const header = `${summary.dataDir}: ${files} company file${files === 1 ? '' : 's'}, control.sqlite schema ${
    summary.controlSchemaVersion ?? '-'
  }`;
  const rows = summary.companies.map((company) => {
    const file = company.file;
    return [
      company.id,
      company.name ?? '(not in control.sqlite)',
      ...COUNTED_TABLES.map((table) => {
        const count = file?.rows[table];
        return count === undefined ? '-' : formatCount(count);
      }),
      file
        ? `${formatBytes(file.bytes)}${file.walBytes > 0 ? ` + ${formatBytes(file.walBytes)} WAL` : ''}`
        : 'no file',
      file ? String(file.schemaVersion) : '-',
      file?.representation === null || file === null ? '-' : String(file.representation),
      file?.lastChangedAt ?? '-',
    ];
  });
  return [
    header,
    ingestLine(summary),
    '',
    formatTable(['company_id', 'name', ...COUNTED_TABLES, 'size', 'schema', 'repr', 'last change'], rows),
  ].join('\n');
}

export const companiesCommand: Command = {
  name: 'companies',
  summary: 'every company file: rows per table, size, versions, last change; ingest lag',
  usage: USAGE,
  async run(args: string[], context: CliContext) {
    const parsed = await parseCommandArgs(args, OPTIONS, USAGE, context);
    if (!parsed) return;
    const { values } = parsed;
    const summary = summarizeDataDir(resolveDataDir(values['data-dir'], context.env), context.now());
    await write(
      context.stdout,
      values.json ? `${JSON.stringify(summary, null, 2)}\n` : `${renderCompanies(summary)}\n`,
    );
  },
};
