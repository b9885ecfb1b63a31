/**
 * Entry of the apply thread (threaded-sink.ts): owns the ProjectionStore — the one writer of the
 * data directory — and applies the batches the main thread decoded, one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ProjectionStoreOptions } from '@pda/projections';
import { serializeError } from './thread-error.ts';
import type { ThreadRequest, ThreadResponse } from './thread-protocol.ts';
import { fromWire } from './wire.ts';
import { Writer } from './writer.ts';

const port = parentPort;
if (!port) throw new Error('apply-thread-entry.ts must run in a worker thread');
const store = new Writer(workerData as ProjectionStoreOptions);

port.on('message', (request: ThreadRequest) => {
  let response: ThreadResponse;
  try {
    if (request.type === 'close') {
      store.close();
      response = { id: request.id, result: null };
    } else if (request.type === 'prune') {
      response = { id: request.id, pruned: store.pruneTombstones(request.options, request.cursor) };
    } else if (request.type === 'prune-dead-letters') {
      response = { id: request.id, deadLettersPruned: store.pruneDeadLetters(request.maxRows).pruned };
    } else if (request.type === 'company') {
      if (request.action === 'start') store.startCompanyRebuild(request.companyId);
      else if (request.action === 'finish') store.finishCompanyRebuild(request.companyId);
      response = { id: request.id, faults: store.companyFaults() };
    } else {
      response = {
        id: request.id,
        result: store.applyBatch(fromWire(request.changes), {
          deadLetters: request.deadLetters,
          ...(request.sourceCurrentAtMs !== undefined
            ? { sourceCurrentAtMs: request.sourceCurrentAtMs }
            : {}),
          ...(request.onlyCompany !== undefined ? { onlyCompany: request.onlyCompany } : {}),
          ...(request.readUpTo !== undefined ? { readUpTo: request.readUpTo } : {}),
        }),
      };
    }
  } catch (error) {
    response = { id: request.id, error: serializeError(error) };
  }
  port.postMessage(response);
  if (request.type === 'close') port.close();
});
