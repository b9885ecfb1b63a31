import type { ProjectionErrorCode } from '@pda/projections/model';
import type { ErrorCode, ParameterError } from '../http/api-error.ts';
import type { CompanyFileCounts } from '../projections/projection-files.ts';
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

export interface ReaderJob {
  readonly id: number;
  readonly input: ListPageInput;
}

/** A page read in a thread: its documents as one buffer of UTF-8 texts joined by commas, transferred. */
export interface ListPageBytes extends Omit<ListPageRead, 'documents'> {
  readonly data: Uint8Array;
  readonly count: number;
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
  | {
      readonly kind: 'error';
      readonly name: string;
      readonly message: string;
      readonly code?: string | number;
      readonly stack?: string;
    };

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
      readonly value: ListPageBytes;
      readonly counts: ReaderCounts;
    }
  | { readonly type: 'failed'; readonly id: number; readonly error: WireError; readonly counts: ReaderCounts }
  | {
      readonly type: 'log';
      readonly level: 'info' | 'warn';
      readonly fields: Readonly<Record<string, unknown>>;
      readonly message: string;
    };
