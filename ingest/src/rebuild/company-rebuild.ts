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
 *    one being replaced, is moved aside, and the company is marked `rebuilding` in
 *    control.sqlite. From the next batch on, the company's live changes go to a NEW file in its
 *    place; the api keeps answering 503 for it, so nobody reads the file while it is incomplete.
 * 2. Backfill: a consumer of a throw-away group reads every data topic from the earliest offset
 *    (compacted: every live row's latest version, ingest/README.md "Rebuild") until it has caught
 *    up with the high watermarks — which lie past every change the live writer skipped while the
 *    company was damaged — and applies, through the same writer, only this company's operations
 *    (`onlyCompany`: planned from control.sqlite's routes as usual, nothing written to control).
 *    Live and backfill changes meet in the new file in any order; the per-row version guards keep
 *    the newest (projections/README.md, "Guarantees").
 * 3. `finish` (in order with the batches): the company's fault row is deleted; the api serves the
 *    complete file from its next request (it reads company_faults at most `API_REOPEN_CHECK_MS`
 *    old and reopens a file whose inode changed).
 *
 * A failed or interrupted backfill leaves the company `rebuilding` (503, never a partial answer);
 * running the rebuild again moves the partial file aside and starts over.
 */
import type { Change, CompanyFault } from '@pda/projections';
import { TENANT_TABLES } from '@pda/projections';
import type { Logger } from 'pino';
import type { AsyncApplySink } from '../apply/sink.ts';
import type { IngestConfig } from '../config.ts';
import { type ColumnType, createDecoder, dataTopics, type RawRecord } from '../decode/index.ts';
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

export interface CompanyRebuildDeps {
  readonly config: IngestConfig;
  readonly logger: Logger;
  readonly sink: AsyncApplySink;
  readonly avscTypes: (table: string) => ReadonlyMap<string, ColumnType> | undefined;
  readonly avro: AvroSupport;
  /** The live worker's group: the backfill's throw-away group is named after it. */
  readonly groupId: string;
  readonly signal: AbortSignal;
}

const TENANT = new Set<string>(TENANT_TABLES);

/**
 * The changes that can touch the company's file: its tenant rows' upserts (a move out of it names
 * another company and is planned against the route, so only upserts naming it matter), and every
 * tenant delete (key only: the route decides, and `onlyCompany` drops the others' operations).
 */
export function touchesCompany(change: Change, companyId: string): boolean {
  if (!TENANT.has(change.table)) return false;
  if (change.kind === 'delete') return true;
  if (change.kind !== 'upsert') return false;
  const named = change.unavailable.includes('company_id') ? undefined : change.row.company_id;
  return named === undefined || named === companyId;
}

export async function rebuildCompany(
  companyId: string,
  deps: CompanyRebuildDeps,
): Promise<CompanyRebuildResult> {
  const { config, logger, sink } = deps;
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
    topicPrefix: config.INGEST_TOPIC_PREFIX,
    bareDecimalMode: config.INGEST_DECIMAL_MODE,
    avscTypes: deps.avscTypes,
    writerSchemas: deps.avro.writerSchemas,
  });
  let events = 0;
  let changes = 0;
  let applied = 0;
  const source = createKafkaSource({
    brokers: config.INGEST_KAFKA_BROKERS,
    clientId: `${config.INGEST_CLIENT_ID}-company-rebuild`,
    groupId,
    topics: dataTopics(config.INGEST_TOPIC_PREFIX),
    fromBeginning: true,
    maxBatchEvents: config.INGEST_MAX_BATCH_EVENTS,
    fetchMaxBytes: config.INGEST_FETCH_MAX_BYTES,
    sessionTimeoutMs: config.INGEST_SESSION_TIMEOUT_MS,
    partitionsInFlight: 1,
    maxEventsInFlight: config.INGEST_MAX_EVENTS_IN_FLIGHT,
    // A company rebuilt from topics that lost their oldest events would lack rows, silently.
    refuseTruncatedTopics: true,
    logger: logger.child({ component: 'company-rebuild' }),
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
            if (decoded.type === 'change' && touchesCompany(decoded.change, companyId))
              mine.push(decoded.change);
          }
          return mine;
        },
        commit: async (mine: Change[]) => {
          if (mine.length === 0) return;
          changes += mine.length;
          const result = await sink.applyBatch(mine, { onlyCompany: companyId });
          applied += result.applied;
        },
      },
      stop.signal,
    )
    .catch((error: unknown) => {
      failed = error;
    });
  try {
    // Caught up: lag 0 on two polls a second apart (the lag monitor polls every 2 s).
    for (let caughtUp = 0; caughtUp < 2; ) {
      if (failed) throw failed;
      if (deps.signal.aborted)
        throw new Error('company rebuild interrupted: the company stays out of service');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const lag = source.lag();
      caughtUp = source.connected() && lag.measured && lag.total === 0 ? caughtUp + 1 : 0;
    }
  } finally {
    stop.abort();
    await running;
    deps.signal.removeEventListener('abort', onAbort);
  }
  if (failed) throw failed;
  await sink.companies('finish', companyId);
  const result = { companyId, groupId, events, changes, applied, seconds: (Date.now() - started) / 1000 };
  logger.info(result, 'company rebuilt: back in service');
  return result;
}
