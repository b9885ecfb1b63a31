/** Messages between the main thread and the apply thread (structured-cloned plain objects). */
import type {
  BatchResult,
  CompanyFault,
  DeadLetter,
  PruneCursor,
  PruneOptions,
  PruneStep,
} from '@pda/projections';
import type { SerializedError } from './thread-error.ts';
import type { WireBatch } from './wire.ts';

export type ThreadRequest =
  | {
      readonly id: number;
      readonly type: 'apply';
      readonly changes: WireBatch;
      readonly deadLetters: readonly DeadLetter[];
      readonly sourceCurrentAtMs?: number;
      readonly onlyCompany?: string;
      readonly readUpTo?: Readonly<Record<string, string>>;
    }
  | {
      readonly id: number;
      readonly type: 'prune';
      readonly options: PruneOptions;
      readonly cursor: PruneCursor | undefined;
    }
  | { readonly id: number; readonly type: 'prune-dead-letters'; readonly maxRows: number }
  | {
      readonly id: number;
      readonly type: 'company';
      /** list: the companies out of service; start/finish: a per-company rebuild (company-rebuild.ts). */
      readonly action: 'list' | 'start' | 'finish';
      readonly companyId: string;
    }
  | { readonly id: number; readonly type: 'close' };

export type ThreadResponse =
  | { readonly id: number; readonly result: BatchResult | null }
  | { readonly id: number; readonly pruned: PruneStep }
  | { readonly id: number; readonly deadLettersPruned: number }
  | { readonly id: number; readonly faults: CompanyFault[] }
  | { readonly id: number; readonly error: SerializedError };
