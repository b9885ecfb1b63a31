/**
 * The per-company rebuild, run BY the live ingest worker (admin port `POST /rebuild?company=<id>`,
 * or `pnpm --filter @pda/ingest run rebuild --company <id>`, which asks it), while every other
 * company keeps being applied.
 *
 * Why inside the running writer rather than a separate process building a file to swap in: a data
 * directory has one writer (docs/decisions/0006). A separate builder would have to hand its file
 * over at an exact Kafka position while the live writer goes on, and the live writer would have to
 * either hold the company's changes meanwhile or skip them and let the builder catch up again —
 * two writers racing on one file and on control.sqlite's routes. Inside the writer there is no
 * hand-over:
 *
 * 1. `start` (through the apply queue, in order with the batches): the damaged file, or a healthy
 *    one being replaced, is moved aside, and the company is marked `rebuilding` in control.sqlite.
 *    Live batches go on skipping the company (as while it was damaged: its changes, and the moves
 *    of its rows to other companies, wait); the api keeps answering 503 for it.
 * 2. Backfill: a consumer of a throw-away group reads every data topic from the earliest offset
 *    (compacted: every live row's latest version, ingest/README.md "Rebuild") and applies, through
 *    the same writer, the company's changes into a new file in its place, and the moves out of it
 *    that waited (`onlyCompany`, projections apply-batch.ts). Every row's changes are replayed in
 *    their order, so the result is what in-order applying gives. Updates leave unchanged TOASTed
 *    columns out (`unavailable`); the value is in the row's earlier events, here or in the file a
 *    moved row came from, neither of which the replay has: the backfill keeps the latest value of
 *    every long text column it reads (any company; values under 1,000 characters are never
 *    TOASTed) and fills them in.
 * 3. `finish` (in order with the batches), once the backfill has caught up: it succeeds only when
 *    the backfill has read every partition at least as far as the live batches applied since the
 *    start (else the backfill goes on and it is asked again). The company's fault row is deleted;
 *    the next live batch applies its changes, all newer than the replay's or the same again
 *    (skipped by the guards). The api serves the complete file from its next check (it reads
 *    company_faults at most `API_REOPEN_CHECK_MS` old and reopens a file whose inode changed).
 *
 * A failed or interrupted backfill leaves the company `rebuilding` (503, never a partial answer);
 * running the rebuild again moves the partial file aside and starts over.
 */
import type { Change } from '@pda/projections/model';
import { companyPartition, TENANT_TABLES } from '@pda/projections/model';
import type { CompanyFault } from '@pda/projections/write';
import type { Logger } from 'pino';
import type { ApplySink } from '../apply-thread/sink.ts';
import type { IngestConfig } from '../config.ts';
import { type ColumnType, createDecoder, dataTopics, type RawRecord } from '../decode/index.ts';
import { kafkaConnectionOptions } from '../kafka/security.ts';
import { createKafkaSource } from '../kafka/source.ts';
import type { AvroSupport } from '../schema-registry/index.ts';

export interface CompanyRebuildResult {
  readonly companyId: string;
  readonly groupId: string;
  /** Events read from the topics, and the company's changes among them handed to the writer. */
  readonly events: number;
  readonly changes: number;
  readonly applied: number;
  readonly seconds: number;
}

/** What a company rebuild reads of the configuration: its consumer is set up like the live one. */
export type CompanyRebuildConfig = Pick<IngestConfig, 'kafka' | 'apply' | 'decimalMode' | 'ownership'>;

export interface CompanyRebuildDeps {
  readonly config: CompanyRebuildConfig;
  readonly logger: Logger;
  readonly sink: ApplySink;
  readonly avscTypes: (table: string) => ReadonlyMap<string, ColumnType> | undefined;
  readonly avro: AvroSupport;
  /** The live worker's group: the backfill's throw-away group is named after it. */
  readonly groupId: string;
  readonly signal: AbortSignal;
}

const TENANT = new Set<string>(TENANT_TABLES);
/** Shorter text is stored inline by PostgreSQL, never TOASTed, so never `unavailable`. */
const LONG_TEXT = 1_000;

/**
 * What the backfill hands to the writer, in stream order: every change of a tenant row from its
 * first upsert naming the company on (its changes there, and after a move out of it the changes
 * elsewhere, which the live batches skipped while the company was out of service; the guards skip
 * the ones the other file already holds). Upserts get their `unavailable` long text columns
 * filled from the latest value read for the row, in any company.
 */
export function createBackfillFilter(companyId: string): (change: Change) => Change | undefined {
  const named = new Set<string>();
  const longText = new Map<string, Map<string, string>>();
  return (change) => {
    if (!TENANT.has(change.table) || change.kind === 'truncate') return undefined;
    if (change.kind === 'delete') {
      // Only a row that has been the company's: the others' deletes would only cost guard checks.
      return named.has(`${change.table}\u0000${String(change.key.id)}`) ? change : undefined;
    }
    const id = change.row.id;
    const key = `${change.table}\u0000${String(id)}`;
    let row = change.row;
    let unavailable = change.unavailable;
    const known = longText.get(key);
    if (known && unavailable.length > 0) {
      const filled = unavailable.filter((column) => known.has(column));
      if (filled.length > 0) {
        row = {
          ...row,
          ...Object.fromEntries(filled.map((column) => [column, known.get(column) as string])),
        };
        unavailable = unavailable.filter((column) => !known.has(column));
      }
    }
    for (const [column, value] of Object.entries(change.row)) {
      if (typeof value !== 'string' || value.length < LONG_TEXT) {
        known?.delete(column);
        continue;
      }
      let values = longText.get(key);
      if (!values) {
        values = new Map();
        longText.set(key, values);
      }
      values.set(column, value);
    }
    const company = unavailable.includes('company_id') ? undefined : row.company_id;
    if (company === companyId) named.add(key);
    if (company !== undefined && !named.has(key)) return undefined;
    return row === change.row ? change : { ...change, row, unavailable };
  };
}

export async function rebuildCompany(
  companyId: string,
  deps: CompanyRebuildDeps,
): Promise<CompanyRebuildResult> {
  const { config, logger, sink } = deps;
  // A split writer rebuilds only companies of its own partitions (another writer holds the others).
  const owned = config.ownership;
  if (owned && !owned.applied.includes(companyPartition(companyId, owned.partitions)))
    throw new Error(
      `company ${companyId} is not this writer's: its partition ${companyPartition(companyId, owned.partitions)} is not among writer "${owned.writer}"'s in ${owned.file}`,
    );
  const started = Date.now();
  const groupId = `${deps.groupId}-company-${companyId}-${started}`;
  const before: CompanyFault | undefined = (await sink.companies('list')).find(
    (f) => f.companyId === companyId,
  );
  await sink.companies('start', companyId);
  logger.info(
    { companyId, groupId, wasOutOfService: before?.state ?? null },
    'company rebuild started: its changes go to a new file; backfilling from the earliest offsets',
  );

  const decoder = createDecoder({
    topicPrefix: config.kafka.topicPrefix,
    bareDecimalMode: config.decimalMode,
    avscTypes: deps.avscTypes,
    writerSchemas: deps.avro.writerSchemas,
  });
  const backfill = createBackfillFilter(companyId);
  let events = 0;
  let changes = 0;
  let applied = 0;
  const source = createKafkaSource({
    brokers: config.kafka.brokers,
    security: kafkaConnectionOptions(config.kafka.security),
    clientId: `${config.kafka.clientId}-company-rebuild`,
    groupId,
    topics: dataTopics(config.kafka.topicPrefix),
    fromBeginning: true,
    maxBatchEvents: config.apply.maxBatchEvents,
    fetchMaxBytes: config.kafka.fetchMaxBytes,
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    partitionsInFlight: 1,
    maxEventsInFlight: config.apply.maxEventsInFlight,
    // A company rebuilt from topics that lost their oldest events would lack rows, silently.
    refuseTruncatedTopics: true,
    logger: logger.child({ component: 'company-rebuild' }),
    // A split writer's backfill reads only its partitions, like its live consumer (kafka/writer-ownership.ts).
    ...(owned && { ownership: { writer: owned, topicPrefix: config.kafka.topicPrefix } }),
  });
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  deps.signal.addEventListener('abort', onAbort, { once: true });
  let failed: unknown;
  const running = source
    .run(
      {
        resolve: deps.avro.resolve,
        prepare: (records: RawRecord[]) => {
          events += records.length;
          const mine: Change[] = [];
          for (const record of records) {
            const decoded = decoder(record);
            const change = decoded.type === 'change' ? backfill(decoded.change) : undefined;
            if (change) mine.push(change);
          }
          const last = records.at(-1) as RawRecord;
          return { mine, readUpTo: { [`${last.topic}/${last.partition}`]: last.offset } };
        },
        // Also a chunk without a change of the company: how far the backfill has read counts.
        commit: async ({ mine, readUpTo }: { mine: Change[]; readUpTo: Record<string, string> }) => {
          changes += mine.length;
          const result = await sink.applyBatch(mine, { onlyCompany: companyId, readUpTo });
          applied += result.applied;
          return undefined; // a backfill is not traced
        },
      },
      stop.signal,
    )
    .catch((error: unknown) => {
      failed = error;
    });
  const check = () => {
    if (failed) throw failed;
    if (deps.signal.aborted) throw new Error('company rebuild interrupted: the company stays out of service');
  };
  try {
    // Caught up: lag 0 on two polls a second apart (the lag monitor polls every 2 s).
    for (let caughtUp = 0; caughtUp < 2; ) {
      check();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const lag = source.lag();
      caughtUp = source.connected() && lag.measured && lag.total === 0 ? caughtUp + 1 : 0;
    }
    // The live batches may have applied (and skipped for the company) a little further meanwhile:
    // the backfill consumes on until it has read as far (RebuildNotCaughtUpError until then).
    for (const deadline = Date.now() + 120_000; ; ) {
      check();
      try {
        await sink.companies('finish', companyId);
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'rebuild_not_caught_up' || Date.now() > deadline)
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    stop.abort();
    await running;
    deps.signal.removeEventListener('abort', onAbort);
  }
  const result = { companyId, groupId, events, changes, applied, seconds: (Date.now() - started) / 1000 };
  logger.info(result, 'company rebuilt: back in service');
  return result;
}
