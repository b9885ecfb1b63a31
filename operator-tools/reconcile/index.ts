// @pda/operator-tools/reconcile: a projection compared with PostgreSQL, row by row, and the source side alone.

export {
  DEFAULT_CLOCK_MARGIN_MS,
  DEFAULT_WAIT_MS,
  InvalidReconcileRequest,
  reconcile,
} from './reconcile.ts';
export { sourceRows } from './source-rows.ts';
export { sourceExpression } from './tables.ts';
export type * from './types.ts';
