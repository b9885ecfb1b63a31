import { formatTable } from '../output/text-table.ts';
import { apiFieldText } from './api-fields.ts';
import type { DataDictionary, DictionaryTable } from './build-dictionary.ts';

/** What `pda projections describe` prints on a terminal. */

export function renderTableList(dictionary: DataDictionary): string {
  const rows = dictionary.tables.map((table) => [
    table.file,
    table.name,
    table.resources.join(', '),
    table.description,
  ]);
  return [
    `company files at schema ${dictionary.versions.company}, control.sqlite at schema ${dictionary.versions.control}, documents at representation ${dictionary.versions.representation}`,
    '',
    formatTable(['file', 'table', 'served as', 'what it holds'], rows),
    '',
    'pda projections describe <table> lists its columns (docs/data-dictionary.md has them all)',
  ].join('\n');
}

export function renderTable(table: DictionaryTable): string {
  const where = table.file === 'company' ? 'companies/<company_id>.sqlite' : 'control.sqlite';
  const facts = [
    `${table.name} (${where}, since schema ${table.since})`,
    table.description,
    table.source ? `rows from PostgreSQL ${table.source}` : 'written by ingest itself (not a captured table)',
    ...(table.resources.length > 0 ? [`served as ${table.resources.join(', ')}`] : []),
    ...(table.indexes.length > 0 ? [`indexes: ${table.indexes.join(', ')}`] : []),
  ];
  const rows = table.columns.map((column) => [
    column.name,
    `${column.type}${column.primaryKey ? ' key' : ''}`,
    column.unit ?? '',
    column.apiFields.map(apiFieldText).join('; '),
    column.description,
  ]);
  return [...facts, '', formatTable(['column', 'type', 'unit / format', 'api field', 'meaning'], rows)].join(
    '\n',
  );
}
