import { UsageError } from '@pda/projections/cli';
import { type CliContext, type Command, parseCommandArgs, write } from '../cli/command.ts';
import { buildDictionary } from '../dictionary/build-dictionary.ts';
import { datasetteMetadata, type SnapshotKind } from '../dictionary/datasette-metadata.ts';
import { renderMarkdown } from '../dictionary/render-markdown.ts';
import { renderTable, renderTableList } from '../dictionary/render-text.ts';

const USAGE = `usage: pnpm pda projections describe [table] [--file company|control] [--format text|json|markdown|datasette]
  The data dictionary: every table and column of the projection files with its type, meaning,
  unit or format, and the api field it feeds (generated from the migrations and the table
  registry; docs/data-dictionary.md is the same). Needs no data directory.
  table            one table (default: the list of tables)
  --file KIND      which file's table, when both have it (tombstones, truncations; default company)
  --format         text (default), json, markdown, or datasette (Datasette metadata for a snapshot:
                   --database NAME, its file name without .sqlite, and --kind analysis|company)`;

const OPTIONS = {
  file: { type: 'string' },
  format: { type: 'string' },
  database: { type: 'string' },
  kind: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = ['text', 'json', 'markdown', 'datasette'] as const;
type Format = (typeof FORMATS)[number];

export const describeCommand: Command = {
  name: 'describe',
  summary: 'the data dictionary: tables, columns, types, meanings, units, api fields',
  usage: USAGE,
  async run(args: string[], context: CliContext) {
    const parsed = await parseCommandArgs(args, OPTIONS, USAGE, context, 1);
    if (!parsed) return;
    const { values, positionals } = parsed;
    const format = (values.format ?? 'text') as Format;
    if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
    const file = values.file ?? 'company';
    if (file !== 'company' && file !== 'control') throw new UsageError('--file must be company or control');
    const dictionary = buildDictionary();

    if (format === 'datasette') {
      const kind = (values.kind ?? 'analysis') as SnapshotKind;
      if (kind !== 'analysis' && kind !== 'company')
        throw new UsageError('--kind must be analysis or company');
      if (values.database === undefined) throw new UsageError('--format datasette needs --database NAME');
      return write(
        context.stdout,
        `${JSON.stringify(datasetteMetadata(dictionary, values.database, kind), null, 2)}\n`,
      );
    }
    const name = positionals[0];
    if (name === undefined) {
      if (format === 'markdown') return write(context.stdout, renderMarkdown(dictionary));
      if (format === 'json') return write(context.stdout, `${JSON.stringify(dictionary, null, 2)}\n`);
      return write(context.stdout, `${renderTableList(dictionary)}\n`);
    }
    const matches = dictionary.tables.filter((table) => table.name === name);
    const table =
      matches.find((t) => t.file === file) ?? (values.file === undefined ? matches[0] : undefined);
    if (!table) {
      const names = [...new Set(dictionary.tables.map((t) => t.name))];
      throw new UsageError(
        `no table ${JSON.stringify(name)} in the ${file} file; tables: ${names.join(', ')}`,
      );
    }
    if (format === 'json') return write(context.stdout, `${JSON.stringify(table, null, 2)}\n`);
    if (format === 'markdown')
      throw new UsageError('--format markdown describes every table: leave the table out');
    await write(context.stdout, `${renderTable(table)}\n`);
  },
};
