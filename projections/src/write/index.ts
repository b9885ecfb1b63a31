// `@pda/projections/write`: the one writer of a data directory (ingest's ProjectionStore) and what
// its callers need. The api and analysts import `@pda/projections/read` only (tests/import-sides.test.ts).

export { openWriter } from '../model/open.ts';
export type { CompanyFault, CompanyFaultState } from '../read/company-faults.ts';
export type { BatchResult, TableCounts } from './apply/result.ts';
export { type ClockUs, wallClockUs } from './files/company-file.ts';
export type { FileCacheCounts } from './files/company-files.ts';
export { openCompanyWriter, openControlWriter, refreshDocuments } from './files/open-writers.ts';
export type { Rejection } from './plan/plan.ts';
export {
  type ApplyOptions,
  ProjectionStore,
  type ProjectionStoreOptions,
  RebuildNotCaughtUpError,
  WRITER_DESCRIPTOR_RESERVE,
} from './store.ts';
export {
  DEFAULT_DEAD_LETTER_LIMITS,
  type DeadLetter,
  type DeadLetterLimits,
} from './upkeep/dead-letters.ts';
export type { PruneCursor, PruneOptions, PruneStep } from './upkeep/prune-tombstones.ts';
export { removeCompanyFiles } from './upkeep/remove-companies.ts';
