/**
 * An ApplySink running ProjectionStore in a worker thread, so the main thread decodes the next
 * chunk (and the Kafka client fetches) while the previous one is applied: both cores busy. Batches are
 * applied in the order sent; a promise resolves only after that batch's transactions committed.
 * If the thread dies, every pending batch rejects (its offsets stay unresolved and are redelivered)
 * and the next batch starts a fresh thread.
 */
import { Worker } from 'node:worker_threads';
import { type Change, deserializeError } from '@pda/projections/model';
import type { ApplyOptions, ProjectionStoreOptions, PruneCursor, PruneOptions } from '@pda/projections/write';
import type { ApplySink } from './sink.ts';
import type { ThreadCallKind, ThreadCalls, ThreadResponse } from './thread-protocol.ts';
import { toWire } from './wire.ts';

/**
 * V8's young generation of the apply thread: 64 MiB semi-spaces (young = 3 x semi-space), as
 * `--max-semi-space-size=64` gives the main thread in ingest's start script. A group's deserialized
 * changes live through the whole apply call; with the default 16 MiB semi-spaces scavenges copied
 * them again and again, then promoted them. Both together raised the steady rate, for a higher
 * peak RSS (measured in bench/results/ingest-2026-11-22.md, "Third round").
 */
const APPLY_THREAD_YOUNG_GENERATION_MB = 192;

interface Pending {
  readonly kind: ThreadCallKind;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export function createThreadedSink(options: ProjectionStoreOptions): ApplySink {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const failAll = (error: Error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };

  function thread(): Worker {
    if (worker) return worker;
    const w = new Worker(new URL('./apply-thread-entry.ts', import.meta.url), {
      workerData: options,
      resourceLimits: { maxYoungGenerationSizeMb: APPLY_THREAD_YOUNG_GENERATION_MB },
    });
    w.on('message', (response: ThreadResponse) => {
      const p = pending.get(response.id);
      pending.delete(response.id);
      if (!p) return;
      if (p.kind !== response.kind)
        p.reject(new Error(`apply thread answered a ${response.kind} request to a ${p.kind} request`));
      else if (response.ok) p.resolve(response.value);
      else p.reject(deserializeError(response.error));
    });
    w.on('error', (error) => failAll(error));
    w.on('exit', (code) => {
      if (worker === w) worker = undefined;
      failAll(new Error(`apply thread exited with code ${code}`));
    });
    worker = w;
    return w;
  }

  /** Sends one request; resolves with the answer its kind names (thread-protocol.ts). */
  function call<K extends ThreadCallKind>(
    kind: K,
    request: ThreadCalls[K]['request'],
  ): Promise<ThreadCalls[K]['response']> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { kind, resolve: resolve as (value: unknown) => void, reject });
      thread().postMessage({ ...request, id, kind });
    });
  }

  return {
    async applyBatch(changes: readonly Change[], applyOptions: ApplyOptions = {}) {
      let wire: ReturnType<typeof toWire>;
      try {
        wire = toWire(changes);
      } catch (error) {
        throw new Error(`apply thread: batch cannot be sent: ${(error as Error).message}`);
      }
      // ApplyOptions is plain data: it crosses to the thread whole, as the store takes it.
      return call('apply', { changes: wire, options: applyOptions });
    },
    pruneTombstones: (pruneOptions: PruneOptions, cursor?: PruneCursor) =>
      call('prune', { options: pruneOptions, cursor }),
    pruneDeadLetters: (maxRows: number) => call('prune-dead-letters', { maxRows }),
    companies: (action, companyId) => call('company', { action, companyId: companyId ?? '' }),
    async close() {
      if (!worker) return;
      const w = worker;
      await call('close', {}).catch(() => null);
      await w.terminate();
      worker = undefined;
    },
  };
}
