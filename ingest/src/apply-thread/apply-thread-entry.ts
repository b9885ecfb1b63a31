/**
 * Entry of the apply thread (threaded-sink.ts): owns the ProjectionStore — the one writer of the
 * data directory — and applies the batches the main thread decoded, one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { serializeError } from '@pda/projections/model';
import type { ProjectionStoreOptions } from '@pda/projections/write';
import { ReopeningStore } from './reopening-store.ts';
import type { ThreadCallKind, ThreadCalls, ThreadRequest, ThreadResponse } from './thread-protocol.ts';
import { fromWire } from './wire.ts';

const port = parentPort;
if (!port) throw new Error('apply-thread-entry.ts must run in a worker thread');
const store = new ReopeningStore(workerData as ProjectionStoreOptions);

/** One answer per request kind (thread-protocol.ts names what each returns). */
const answers: { [K in ThreadCallKind]: (request: ThreadRequest<K>) => ThreadCalls[K]['response'] } = {
  apply: (request) => store.applyBatch(fromWire(request.changes), request.options),
  prune: (request) => store.pruneTombstones(request.options, request.cursor),
  'prune-dead-letters': (request) => ({ pruned: store.pruneDeadLetters(request.maxRows).pruned }),
  company: (request) => {
    if (request.action === 'start') store.startCompanyRebuild(request.companyId);
    else if (request.action === 'finish') store.finishCompanyRebuild(request.companyId);
    return store.companyFaults();
  },
  close: () => {
    store.close();
    return null;
  },
};

function answer<K extends ThreadCallKind>(request: ThreadRequest<K>): ThreadResponse<K> {
  const { id, kind } = request;
  try {
    const value = (answers[kind] as (r: ThreadRequest<K>) => ThreadCalls[K]['response'])(request);
    return { id, kind, ok: true, value } as ThreadResponse<K>;
  } catch (error) {
    return { id, kind, ok: false, error: serializeError(error) } as ThreadResponse<K>;
  }
}

port.on('message', (request: ThreadRequest) => {
  port.postMessage(answer(request));
  if (request.kind === 'close') port.close();
});
