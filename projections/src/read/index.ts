// `@pda/projections/read`: the readers of the projection files (api, analysts, tools). Nothing here
// writes; the writer is `@pda/projections/write` (ingest), which the api and analysts never import
// (tests/import-sides.test.ts).
export * from './apply-traces.ts';
export * from './changes.ts';
export * from './changes-rows.ts';
export * from './company-faults.ts';
export * from './control.ts';
export * from './control-memo.ts';
export * from './deletions.ts';
export * from './document.ts';
export * from './items.ts';
export * from './open-readers.ts';
export * from './page.ts';
export * from './read-handle.ts';
export * from './row-builder.ts';
export * from './sync-state.ts';
export * from './tables.ts';
