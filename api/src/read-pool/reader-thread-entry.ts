import { parentPort, workerData } from 'node:worker_threads';
import { classifyFault } from '@pda/projections/model';
import { ProjectionFiles } from '../company-files/projection-files.ts';
import { pageBytes } from '../http/page-bytes.ts';
import { type ChangesPageInput, readChangesPage } from './changes-page-read.ts';
import { type ListPageInput, readListPage } from './list-page-read.ts';
import { toWire } from './reader-errors.ts';
import type {
  ReadBytes,
  ReaderCounts,
  ReaderJob,
  ReaderMessage,
  ReaderThreadData,
  ReadKind,
} from './reader-protocol.ts';

/**
 * A reader thread (read-pool.ts): its own read-only handles on the projection files, one page read
 * at a time. The page's documents go back as one buffer whose memory is transferred, not copied;
 * the garbage of reading them (rows, strings) stays in this thread's heap, so its collections do
 * not pause the api's event loop.
 */
const data = workerData as ReaderThreadData;
const port = parentPort!;
const post = (message: ReaderMessage, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

const files = new ProjectionFiles(data.dataDir, {
  maxOpenCompanies: data.maxOpenCompanies,
  maxStatementsPerFile: data.maxStatementsPerFile,
  reopenCheckMs: data.reopenCheckMs,
  now: Date.now,
  onSwap: (from, to) =>
    post({
      type: 'log',
      level: 'info',
      fields: { from, to },
      message: 'reader thread: projection files swapped; reopening handles',
    }),
  onCompanyFault: (companyId, fault) =>
    post({
      type: 'log',
      level: fault ? 'warn' : 'info',
      fields: { companyId, ...(fault && { state: fault.state, reason: fault.reason }) },
      message: fault
        ? `reader thread: company ${companyId} is out of service (${fault.state})`
        : `reader thread: company ${companyId} is back in service`,
    }),
});

/** The bytes in an ArrayBuffer of their own: a small Buffer may be a slice of Node's shared pool. */
function ownBuffer(bytes: Buffer): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  return new Uint8Array(bytes);
}

function counts(): ReaderCounts {
  const statements = files.statements();
  return {
    companyFiles: files.counts(),
    statementsHeld: statements.held,
    statementsEvicted: statements.evicted,
  };
}

function readOf(job: ReaderJob): { readonly items: readonly string[] } {
  switch (job.kind) {
    case 'list':
      return readListPage(files, job.input as ListPageInput);
    case 'changes':
      return readChangesPage(files, job.input as ChangesPageInput);
  }
}

port.on('message', (job: ReaderJob) => {
  try {
    const { items, ...read } = readOf(job);
    const value = {
      ...read,
      data: ownBuffer(pageBytes('', items, '')),
      count: items.length,
    } as ReadBytes<ReadKind>;
    post({ type: 'done', id: job.id, value, counts: counts() }, [value.data.buffer as ArrayBuffer]);
  } catch (error) {
    // As the loop's error handler does (plugins/problems.ts): a query that met a damaged file
    // closes its handle, so the next read opens the file again.
    if (classifyFault(error) !== undefined) files.forget(job.input.companyId);
    post({ type: 'failed', id: job.id, error: toWire(error), counts: counts() });
  }
});

port.on('close', () => files.close());
