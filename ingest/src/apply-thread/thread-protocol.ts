/**
 * Messages between the main thread and the apply thread (structured-cloned plain objects). Each
 * request kind names its response in ThreadCalls, so both sides are checked against one table: a
 * request is `{ id, kind, ...request }`, its answer `{ id, kind, ok: true, value }` or
 * `{ id, kind, ok: false, error }`.
 */
import type { SerializedError } from '@pda/projections/model';
import type {
  ApplyOptions,
  BatchResult,
  CompanyFault,
  PruneCursor,
  PruneOptions,
  PruneStep,
} from '@pda/projections/write';
import type { WireBatch } from './wire.ts';

export interface ThreadCalls {
  apply: {
    request: {
      readonly changes: WireBatch;
      readonly options: ApplyOptions;
    };
    response: BatchResult;
  };
  prune: {
    request: { readonly options: PruneOptions; readonly cursor: PruneCursor | undefined };
    response: PruneStep;
  };
  'prune-dead-letters': { request: { readonly maxRows: number }; response: { readonly pruned: number } };
  company: {
    /** list: the companies out of service; start/finish: a per-company rebuild (live-rebuild/company-rebuild.ts). */
    request: { readonly action: 'list' | 'start' | 'finish'; readonly companyId: string };
    response: CompanyFault[];
  };
  close: { request: Record<never, never>; response: null };
}

export type ThreadCallKind = keyof ThreadCalls;

export type ThreadRequest<K extends ThreadCallKind = ThreadCallKind> = K extends ThreadCallKind
  ? { readonly id: number; readonly kind: K } & ThreadCalls[K]['request']
  : never;

export type ThreadResponse<K extends ThreadCallKind = ThreadCallKind> = K extends ThreadCallKind
  ?
      | {
          readonly id: number;
          readonly kind: K;
          readonly ok: true;
          readonly value: ThreadCalls[K]['response'];
        }
      | { readonly id: number; readonly kind: K; readonly ok: false; readonly error: SerializedError }
  : never;
