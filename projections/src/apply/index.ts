export type { ClockUs } from './clock.ts';
export { type CompanyFault, type CompanyFaultState, readCompanyFaults } from './company-faults.ts';
export type { FileCacheCounts } from './company-files.ts';
export {
  DEFAULT_DEAD_LETTER_LIMITS,
  type DeadLetter,
  type DeadLetterLimits,
} from './dead-letters.ts';
export type { Rejection } from './plan.ts';
export type { PruneCursor, PruneOptions, PruneStep } from './prune-tombstones.ts';
export type { BatchResult, TableCounts } from './result.ts';
export {
  type ApplyOptions,
  ProjectionStore,
  type ProjectionStoreOptions,
  RebuildNotCaughtUpError,
  WRITER_DESCRIPTOR_RESERVE,
} from './store.ts';
