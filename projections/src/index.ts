export * from './apply/index.ts';
export * from './change.ts';
export * from './errors.ts';
export * from './handles.ts';
export * from './migrate.ts';
export * from './open.ts';
export * from './paths.ts';
export * from './read/index.ts';
