export * from './change.ts';
