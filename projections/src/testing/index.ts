// Test and benchmark factories, imported as `@pda/projections/testing` (package.json exports):
// kept out of the production entry point, so nothing deployed depends on them.
export * from './build-projection.ts';
export * from './free-port.ts';
export * from './make-change.ts';
export * from './metric-sample.ts';
export * from './readme-settings.ts';
export * from './run-entry-point.ts';
export * from './sample-rows.ts';
export * from './seeded-random.ts';
