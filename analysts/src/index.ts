// @pda/analysts: the analysts' command-line tool for the projection files (src/main.ts) and what it
// is built from, for scripts and tests.
export * from './dictionary/api-fields.ts';
export * from './dictionary/build-dictionary.ts';
export * from './dictionary/datasette-metadata.ts';
export * from './dictionary/render-markdown.ts';
export * from './export/export-table.ts';
export * from './inspect/company-summaries.ts';
export * from './snapshot/analysis-database.ts';
export * from './snapshot/analysis-schema.ts';
export * from './snapshot/copy-file.ts';
export * from './sql/read-only-statement.ts';
