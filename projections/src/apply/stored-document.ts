import type { TableName } from '@pda/schemas/registry';
import { quoteIdent } from '../quote-ident.ts';
import { type ValuesRenderer, valuesRenderer } from '../stored-documents.ts';
import type { CompanyFile } from './company-file.ts';
import type { TableSpec } from './table-spec.ts';

/**
 * The stored document (`_json`) of an upserted row, rendered from the values the upsert writes
 * (projections/src/stored-documents.ts). The values are the ones SQLite stores (STRICT tables keep
 * their types), so the JSON equals what a render of the stored row would give.
 */

interface SpecRendering {
  readonly columns: readonly string[];
  readonly render: ValuesRenderer;
}

/** Per table spec (one per table and process): no key building per upsert. */
const renderings = new WeakMap<TableSpec, SpecRendering>();

function renderingOf(spec: TableSpec): SpecRendering {
  let rendering = renderings.get(spec);
  if (!rendering) {
    const columns = spec.columns.map((column) => column.name);
    rendering = { columns, render: valuesRenderer(spec.table as TableName, columns)! };
    renderings.set(spec, rendering);
  }
  return rendering;
}

export function renderDocument(spec: TableSpec, values: readonly unknown[]): string {
  return renderingOf(spec).render(values);
}

/** After an upsert that kept some stored columns (TOAST-unchanged values): render the stored row. */
export function rerenderStored(file: CompanyFile, spec: TableSpec, id: string): void {
  const names = renderingOf(spec).columns;
  const t = quoteIdent(spec.table);
  const values = file.statements
    .get(
      `document:row:${spec.table}`,
      () => `SELECT ${names.map(quoteIdent).join(', ')} FROM ${t} WHERE "id" = ?`,
    )
    .raw()
    .get(id) as unknown[] | undefined;
  if (values === undefined) return;
  file.statements
    .get(`document:set:${spec.table}`, () => `UPDATE ${t} SET "_json" = ? WHERE "id" = ?`)
    .run(renderDocument(spec, values), id);
}
