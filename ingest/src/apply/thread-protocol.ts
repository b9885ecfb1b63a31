/** Messages between the main thread and the apply thread (structured-cloned plain objects). */
import type { BatchResult, Change, DeadLetter } from '@pda/projections';

export type ThreadRequest =
  | {
      readonly id: number;
      readonly type: 'apply';
      readonly changes: readonly Change[];
      readonly deadLetters: readonly DeadLetter[];
    }
  | { readonly id: number; readonly type: 'close' };

export type ThreadResponse =
  | { readonly id: number; readonly result: BatchResult | null }
  | { readonly id: number; readonly error: string };
