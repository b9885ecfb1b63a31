/**
 * An AsyncApplySink running ProjectionStore in a worker thread, so the main thread decodes the next
 * chunk (and kafkajs fetches) while the previous one is applied: both cores busy. Batches are
 * applied in the order sent; a promise resolves only after that batch's transactions committed.
 * If the thread dies, every pending batch rejects (its offsets stay unresolved and are redelivered)
 * and the next batch starts a fresh thread.
 */
import { Worker } from 'node:worker_threads';
import type {
  ApplyOptions,
  Change,
  ProjectionStoreOptions,
  PruneCursor,
  PruneOptions,
} from '@pda/projections';
import type { AsyncApplySink } from './sink.ts';
import { deserializeError } from './thread-error.ts';
import type { ThreadRequest, ThreadResponse } from './thread-protocol.ts';
import { toWire } from './wire.ts';

/**
 * V8's young generation of the apply thread: 64 MiB semi-spaces (young = 3 x semi-space), as
 * `--max-semi-space-size=64` gives the main thread in ingest's start script. A group's deserialized
 * changes live through the whole apply call; with the default 16 MiB semi-spaces scavenges copied
 * them again and again, then promoted them. Both together: steady ~29,000 -> ~33,000 events/s,
 * peak RSS ~0.8 -> ~1 GB (bench/results/ingest-2026-11-22.md).
 */
const APPLY_THREAD_YOUNG_GENERATION_MB = 192;

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

interface Pending {
  resolve(response: ThreadResponse): void;
  reject(error: Error): void;
}

export function createThreadedSink(options: ProjectionStoreOptions): AsyncApplySink {
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
      if ('error' in response) p?.reject(deserializeError(response.error));
      else p?.resolve(response);
    });
    w.on('error', (error) => failAll(error));
    w.on('exit', (code) => {
      if (worker === w) worker = undefined;
      failAll(new Error(`apply thread exited with code ${code}`));
    });
    worker = w;
    return w;
  }

  function send(request: WithoutId<ThreadRequest>): Promise<ThreadResponse> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      thread().postMessage({ ...request, id });
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
      const response = await send({
        type: 'apply',
        changes: wire,
        deadLetters: applyOptions.deadLetters ?? [],
        ...(applyOptions.sourceCurrentAtMs !== undefined
          ? { sourceCurrentAtMs: applyOptions.sourceCurrentAtMs }
          : {}),
        ...(applyOptions.onlyCompany !== undefined ? { onlyCompany: applyOptions.onlyCompany } : {}),
        ...(applyOptions.readUpTo !== undefined ? { readUpTo: applyOptions.readUpTo } : {}),
      });
      if (!('result' in response) || !response.result) throw new Error('apply thread returned no result');
      return response.result;
    },
    async pruneTombstones(pruneOptions: PruneOptions, cursor?: PruneCursor) {
      const response = await send({ type: 'prune', options: pruneOptions, cursor });
      if (!('pruned' in response)) throw new Error('apply thread returned no prune step');
      return response.pruned;
    },
    async pruneDeadLetters(maxRows: number) {
      const response = await send({ type: 'prune-dead-letters', maxRows });
      if (!('deadLettersPruned' in response))
        throw new Error('apply thread returned no dead-letter prune step');
      return { pruned: response.deadLettersPruned };
    },
    async companies(action, companyId) {
      const response = await send({ type: 'company', action, companyId: companyId ?? '' });
      if (!('faults' in response)) throw new Error('apply thread returned no company faults');
      return response.faults;
    },
    async close() {
      if (!worker) return;
      const w = worker;
      await send({ type: 'close' }).catch(() => null);
      await w.terminate();
      worker = undefined;
    },
  };
}
