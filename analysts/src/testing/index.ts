// Test and documentation fixtures, imported as `@pda/analysts/testing` (kept out of the CLI's
// entry point: it needs @pda/dev-world, a development dependency).

export * from './run-pda.ts';
export * from './seed-projection.ts';
