export * from './build-projection.ts';
export * from './make-change.ts';
export * from './sample-rows.ts';
