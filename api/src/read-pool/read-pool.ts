import { Worker } from 'node:worker_threads';
import { addCompanyFileCounts } from '../company-files/projection-files.ts';
import { fromWire } from './reader-errors.ts';
import type {
  ReadBytes,
  ReaderCounts,
  ReaderJob,
  ReaderMessage,
  ReaderReads,
  ReaderThreadData,
  ReadKind,
} from './reader-protocol.ts';

/**
 * Page reads (list pages and the change feed's) off the event loop (api/README.md, "Reader threads"; issue 34): `threads` worker
 * threads, each with its own read-only handles, one read at a time. The loop keeps the HTTP work
 * (parsing, auth, links, writing); a page's SQLite read and its garbage go to a thread.
 *
 * Fair between keys: reads wait in a queue per key; a free thread takes the first read of the key
 * served longest ago, and one key holds at most `threads - 1` threads (all of them when there is
 * one), so another key's read waits behind no queue, at most behind the read in progress on the
 * thread it gets.
 */
export interface ReadPoolOptions {
  readonly threads: number;
  readonly thread: ReaderThreadData;
  readonly log: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void;
}

interface Job {
  readonly key: string;
  readonly message: ReaderJob;
  resolve(value: ReadBytes<ReadKind>): void;
  reject(error: Error): void;
}

interface ReaderThread {
  readonly worker: Worker;
  job: Job | undefined;
  /** What its caches held at its last answer. */
  counts: ReaderCounts | undefined;
}

export class ReadPool {
  readonly #options: ReadPoolOptions;
  readonly #threads: ReaderThread[] = [];
  /** Reads waiting, per key, oldest first. */
  readonly #waiting = new Map<string, Job[]>();
  readonly #running = new Map<string, number>();
  /** When each key with reads running or waiting was last handed a thread (a dispatch count). */
  readonly #lastServed = new Map<string, number>();
  #dispatched = 0;
  readonly #perKey: number;
  #nextId = 1;
  #closed = false;

  constructor(options: ReadPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new Error(`a read pool needs at least one thread, not ${options.threads}`);
    }
    this.#options = options;
    this.#perKey = Math.max(1, options.threads - 1);
    for (let index = 0; index < options.threads; index++) this.#threads.push(this.#start());
  }

  /** Reads one page in a thread, in `key`'s turn. */
  read<K extends ReadKind>(key: string, kind: K, input: ReaderReads[K]['input']): Promise<ReadBytes<K>> {
    if (this.#closed) return Promise.reject(new Error('the read pool is closed'));
    return new Promise<ReadBytes<K>>((resolve, reject) => {
      const job: Job = {
        key,
        message: { id: this.#nextId++, kind, input },
        resolve: resolve as (value: ReadBytes<ReadKind>) => void,
        reject,
      };
      const queue = this.#waiting.get(key);
      if (queue) queue.push(job);
      else this.#waiting.set(key, [job]);
      this.#dispatch();
    });
  }

  /** Reads waiting for a thread now (metrics, tests). */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#waiting.values()) count += queue.length;
    return count;
  }

  /** The threads' caches added up, as of each one's last answer (a replaced thread starts at zero). */
  counts(): ReaderCounts {
    let total: ReaderCounts = {
      companyFiles: { hits: 0, misses: 0, evictions: 0, open: 0, max: 0 },
      statementsHeld: 0,
      statementsEvicted: 0,
    };
    for (const { counts } of this.#threads) {
      if (counts) total = addReaderCounts(total, counts);
    }
    return total;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closed = new Error('the read pool is closed');
    for (const queue of this.#waiting.values()) for (const job of queue) job.reject(closed);
    this.#waiting.clear();
    await Promise.all(this.#threads.map((thread) => thread.worker.terminate()));
  }

  #start(): ReaderThread {
    const worker = new Worker(new URL('./reader-thread-entry.ts', import.meta.url), {
      workerData: this.#options.thread,
    });
    const thread: ReaderThread = { worker, job: undefined, counts: undefined };
    worker.on('message', (message: ReaderMessage) => this.#answer(thread, message));
    worker.on('error', (error) => this.#options.log('error', { err: error }, 'reader thread failed'));
    worker.on('exit', (code) => this.#exited(thread, code));
    // A thread with nothing to do must not keep the process alive (close() ends them anyway).
    worker.unref();
    return thread;
  }

  #answer(thread: ReaderThread, message: ReaderMessage): void {
    if (message.type === 'log') {
      this.#options.log(message.level, { ...message.fields }, message.message);
      return;
    }
    thread.counts = message.counts;
    const job = thread.job;
    if (!job || job.message.id !== message.id) return;
    this.#finished(thread, job);
    if (message.type === 'done') job.resolve(message.value);
    else job.reject(fromWire(message.error));
    this.#dispatch();
  }

  /** A thread that died fails its read (a 500 for that request, logged) and is replaced. */
  #exited(thread: ReaderThread, code: number): void {
    const job = thread.job;
    if (job) {
      this.#finished(thread, job);
      job.reject(new Error(`reader thread exited with code ${code}`));
    }
    const index = this.#threads.indexOf(thread);
    if (index < 0 || this.#closed) return;
    this.#options.log('error', { code }, 'reader thread exited; starting another');
    this.#threads[index] = this.#start();
    this.#dispatch();
  }

  #finished(thread: ReaderThread, job: Job): void {
    thread.job = undefined;
    const running = (this.#running.get(job.key) ?? 1) - 1;
    if (running > 0) this.#running.set(job.key, running);
    else {
      this.#running.delete(job.key);
      // An idle key starts afresh: its next read goes before keys that are being served.
      if (!this.#waiting.has(job.key)) this.#lastServed.delete(job.key);
    }
  }

  /** Hands waiting reads to idle threads: keys in turn, none beyond its share. */
  #dispatch(): void {
    for (const thread of this.#threads) {
      if (thread.job) continue;
      const job = this.#nextJob();
      if (!job) return;
      thread.job = job;
      this.#running.set(job.key, (this.#running.get(job.key) ?? 0) + 1);
      thread.worker.postMessage(job.message);
    }
  }

  /** The waiting key served longest ago (a key never served, or idle since, first), within its share. */
  #nextJob(): Job | undefined {
    let chosen: string | undefined;
    let chosenServed = Number.POSITIVE_INFINITY;
    for (const key of this.#waiting.keys()) {
      if ((this.#running.get(key) ?? 0) >= this.#perKey) continue;
      const served = this.#lastServed.get(key) ?? 0;
      if (served < chosenServed) {
        chosen = key;
        chosenServed = served;
      }
    }
    if (chosen === undefined) return undefined;
    const queue = this.#waiting.get(chosen)!;
    const job = queue.shift()!;
    if (queue.length === 0) this.#waiting.delete(chosen);
    this.#lastServed.set(chosen, ++this.#dispatched);
    return job;
  }
}

function addReaderCounts(a: ReaderCounts, b: ReaderCounts): ReaderCounts {
  return {
    companyFiles: addCompanyFileCounts(a.companyFiles, b.companyFiles),
    statementsHeld: a.statementsHeld + b.statementsHeld,
    statementsEvicted: a.statementsEvicted + b.statementsEvicted,
  };
}
