export * from './control.ts';
export * from './control-memo.ts';
export * from './document.ts';
export * from './items.ts';
export * from './page.ts';
export * from './read-handle.ts';
export * from './row-builder.ts';
export * from './tables.ts';
