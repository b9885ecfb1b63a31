/**
 * Makes sure every writer schema a chunk of records names is in `WriterSchemas` before the chunk is
 * decoded (decoding stays synchronous). Each id is fetched once per process; a new schema version
 * (a column added at the source) is just a new id, fetched when its first record arrives, no restart.
 *
 * While the registry cannot answer, the chunk WAITS: retries with backoff (0.5 s … 30 s), the Kafka
 * group heartbeat kept alive, one warning when the wait starts and one line when it ends; `/readyz`
 * and the metrics say so meanwhile (ingest/README.md, "Avro and the schema registry"). Nothing is
 * dead-lettered and nothing crashes for a registry outage: the records are decoded once it is back.
 * A schema that can never be used (not Avro, does not compile) is stored as its error and its
 * records become dead letters with that reason.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { RawRecord } from '../decode/index.ts';
import { schemaIdOf, type WriterSchemas } from '../decode/index.ts';
import type { IngestMetrics } from '../observability/metrics.ts';
import { SchemaFetchError, type SchemaRegistryClient } from './client.ts';

export interface ResolveHooks {
  /** Called while waiting (the consumer's group heartbeat), at least every few seconds. */
  heartbeat?: () => Promise<void>;
  signal?: AbortSignal;
}

export interface RegistryState {
  /** True while a chunk waits for the registry. */
  readonly waiting: boolean;
  readonly since: number | undefined;
  readonly error: string | undefined;
}

export interface SchemaResolver {
  /** Resolves when every Avro id of `records` is known (or `signal` aborted: the caller stops). */
  resolve(records: readonly RawRecord[], hooks?: ResolveHooks): Promise<void>;
  state(): RegistryState;
}

const HEARTBEAT_EVERY_MS = 3000;

export function createSchemaResolver(deps: {
  readonly client: SchemaRegistryClient;
  readonly schemas: WriterSchemas;
  readonly logger: Logger;
  readonly metrics?: IngestMetrics;
  /** Backoff bounds (tests shorten them). */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}): SchemaResolver {
  const { client, schemas, logger, metrics } = deps;
  const minBackoff = deps.minBackoffMs ?? 500;
  const maxBackoff = deps.maxBackoffMs ?? 30_000;
  let state: RegistryState = { waiting: false, since: undefined, error: undefined };
  /** One fetch per id at a time, whichever partition asks. */
  const pending = new Map<number, Promise<void>>();

  function missing(records: readonly RawRecord[]): number[] {
    const ids = new Set<number>();
    for (const record of records) {
      const k = schemaIdOf(record.key);
      if (k !== undefined && !schemas.has(k)) ids.add(k);
      const v = schemaIdOf(record.value);
      if (v !== undefined && !schemas.has(v)) ids.add(v);
    }
    return [...ids];
  }

  async function fetchOnce(id: number): Promise<void> {
    try {
      const text = await client.fetchSchema(id);
      const entry = schemas.add(id, text);
      metrics?.registryFetches.inc({ outcome: 'ok' });
      if ('error' in entry)
        logger.error(
          { schemaId: id, reason: entry.error },
          'writer schema unusable: its records are dead letters',
        );
      else logger.info({ schemaId: id, cached: schemas.size }, 'writer schema fetched');
    } catch (error) {
      if (error instanceof SchemaFetchError && !error.retriable) {
        schemas.reject(id, error.message);
        metrics?.registryFetches.inc({ outcome: 'unusable' });
        logger.error(
          { schemaId: id, reason: error.message },
          'writer schema unusable: its records are dead letters',
        );
        return;
      }
      metrics?.registryFetches.inc({ outcome: 'error' });
      throw error;
    }
  }

  function fetchShared(id: number): Promise<void> {
    let p = pending.get(id);
    if (!p) {
      p = fetchOnce(id).finally(() => pending.delete(id));
      pending.set(id, p);
    }
    return p;
  }

  function enterWait(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (!state.waiting) {
      logger.warn(
        { err: message },
        'schema registry unavailable: consumption waits for it (nothing is dead-lettered)',
      );
      state = { waiting: true, since: Date.now(), error: message };
      metrics?.registryWaiting.set(1);
    } else {
      state = { ...state, error: message };
    }
  }

  function leaveWait(): void {
    if (!state.waiting) return;
    logger.info(
      { waitedMs: Date.now() - (state.since ?? Date.now()) },
      'schema registry answers again: consumption resumes',
    );
    state = { waiting: false, since: undefined, error: undefined };
    metrics?.registryWaiting.set(0);
  }

  async function pause(ms: number, hooks: ResolveHooks): Promise<void> {
    for (let left = ms; left > 0 && !hooks.signal?.aborted; left -= HEARTBEAT_EVERY_MS) {
      await sleep(Math.min(left, HEARTBEAT_EVERY_MS), undefined, { signal: hooks.signal }).catch(() => {});
      await hooks.heartbeat?.().catch(() => {});
    }
  }

  return {
    state: () => state,
    async resolve(records, hooks = {}) {
      let backoff = minBackoff;
      for (let ids = missing(records); ids.length > 0; ids = missing(records)) {
        if (hooks.signal?.aborted) return;
        const results = await Promise.allSettled(ids.map(fetchShared));
        const failed = results.find((r) => r.status === 'rejected');
        if (!failed) break;
        enterWait(failed.reason);
        await pause(backoff, hooks);
        backoff = Math.min(maxBackoff, backoff * 2);
      }
      if (!hooks.signal?.aborted) leaveWait();
      metrics?.writerSchemas.set(schemas.size);
    },
  };
}
