import type { ProjectionErrorCode, SerializedError } from '@pda/projections/model';
import type { CompanyFileCounts } from '../company-files/projection-files.ts';
import type { ErrorCode, ParameterError } from '../errors/api-error.ts';
import type { ChangesPageInput, ChangesPageRead } from './changes-page-read.ts';
import type { ListPageInput, ListPageRead } from './list-page-read.ts';

/**
 * What crosses between the api's event loop and a reader thread (read-pool.ts ↔
 * reader-thread-entry.ts). Structured clone keeps plain data only: an error travels as a
 * description the loop rebuilds into the class the error handler maps (reader-errors.ts).
 */

/** How a reader thread opens the projection files (the api's own settings). */
export interface ReaderThreadData {
  readonly dataDir: string;
  readonly maxOpenCompanies: number;
  readonly maxStatementsPerFile: number;
  readonly reopenCheckMs: number;
}

/** The reads a thread does: each kind's input and what it reads on the loop. */
export interface ReaderReads {
  readonly list: { readonly input: ListPageInput; readonly read: ListPageRead };
  readonly changes: { readonly input: ChangesPageInput; readonly read: ChangesPageRead };
}
export type ReadKind = keyof ReaderReads;

/** A page read in a thread: its items as one buffer of UTF-8 texts joined by commas, transferred. */
export type PageBytes<R extends { readonly items: readonly string[] }> = Omit<R, 'items'> & {
  readonly data: Uint8Array;
  readonly count: number;
};
export type ReadBytes<K extends ReadKind> = PageBytes<ReaderReads[K]['read']>;
export type ListPageBytes = ReadBytes<'list'>;
export type ChangesPageBytes = ReadBytes<'changes'>;

export interface ReaderJob {
  readonly id: number;
  readonly kind: ReadKind;
  readonly input: ReaderReads[ReadKind]['input'];
}

export type WireError =
  | {
      readonly kind: 'api';
      readonly code: ErrorCode;
      readonly detail: string;
      readonly errors?: readonly ParameterError[] | undefined;
      readonly headers?: Readonly<Record<string, string>> | undefined;
    }
  | { readonly kind: 'projection'; readonly code: ProjectionErrorCode; readonly message: string }
  | ({ readonly kind: 'error' } & SerializedError);

/** A thread's handle and statement caches, sent with every answer (the api's metrics add them up). */
export interface ReaderCounts {
  readonly companyFiles: CompanyFileCounts;
  readonly statementsHeld: number;
  readonly statementsEvicted: number;
}

export type ReaderMessage =
  | {
      readonly type: 'done';
      readonly id: number;
      readonly value: ReadBytes<ReadKind>;
      readonly counts: ReaderCounts;
    }
  | { readonly type: 'failed'; readonly id: number; readonly error: WireError; readonly counts: ReaderCounts }
  | {
      readonly type: 'log';
      readonly level: 'info' | 'warn';
      readonly fields: Readonly<Record<string, unknown>>;
      readonly message: string;
    };
