/**
 * Prometheus metrics of one ingest process (served on the admin port at /metrics).
 * Names are prefixed pda_ingest_; ingest/README.md lists them.
 */
import { SOURCE_TABLES } from '@pda/projections/model';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface IngestMetrics {
  readonly registry: Registry;
  readonly events: Counter<'table' | 'outcome'>;
  readonly ignored: Counter<'reason'>;
  /** Tenant changes of a company this split writer does not apply (kafka/writer-ownership.ts), not applied. */
  readonly notOwned: Counter<'table'>;
  /** Company files on disk whose company this split writer no longer applies (ownership shrank). */
  readonly companiesNotOwned: Gauge;
  readonly lag: Gauge<'topic' | 'partition'>;
  readonly batchDuration: Histogram;
  readonly connected: Gauge;
  /** The writer's cache of open company files (fed from each batch's result). */
  readonly companyFilesOpened: Counter;
  readonly companyFilesEvicted: Counter;
  readonly companyFilesClosedIdle: Counter;
  readonly openCompanyFiles: Gauge;
  readonly openCompanyFilesMax: Gauge;
  /** The writer's prepared statements over its open files (fed from each batch's result). */
  readonly statementsEvicted: Counter;
  readonly statementsHeld: Gauge;
  /** The Avro path's schema registry (schema-registry/resolver.ts). */
  readonly registryWaiting: Gauge;
  readonly registryFetches: Counter<'outcome'>;
  readonly writerSchemas: Gauge;
  /** 1 for the storage fault stopping the writer (full, read_only, io), else 0 (batch/storage-state.ts). */
  readonly storageFault: Gauge<'kind'>;
  /** Companies out of service by state (damaged, rebuilding): projections' company_faults. */
  readonly companiesOutOfService: Gauge<'state'>;
  /** A catch-up's rate and ETA (observability/catch-up-reporter.ts). */
  readonly catchUpEventsPerSecond: Gauge;
  readonly catchUpEtaSeconds: Gauge;
  /**
   * Kafka messages through the pipeline since start (applied, skipped, dead-lettered or ignored):
   * the catch-up rate counts these, in the unit of the consumer lag. A plain number, read every second.
   */
  consumedMessages: number;
  /** The companies out of service after the last apply call (/readyz `company_files`). */
  companyFaults: readonly { companyId: string; state: string; reason: string; detectedAtMs: number }[];
  /** Source commit time (ms) of the last applied change; freshness is computed at scrape time. */
  lastSourceTsMs: number | undefined;
  /** Source time (ms) up to which every change is known applied (heartbeats confirmed while caught up). */
  sourceCurrentAtMs: number | undefined;
}

export function createMetrics(now: () => number = Date.now): IngestMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'pda_ingest_' });
  const metrics: IngestMetrics = {
    registry,
    events: new Counter({
      name: 'pda_ingest_events_total',
      help: 'Change events by source table and outcome (applied, skipped by the version guard, dead_lettered)',
      labelNames: ['table', 'outcome'],
      registers: [registry],
    }),
    ignored: new Counter({
      name: 'pda_ingest_ignored_total',
      help: 'Messages deliberately not applied (tombstone, heartbeat, transaction, uncaptured-table, message)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    notOwned: new Counter({
      name: 'pda_ingest_not_owned_total',
      help: "Tenant changes not applied because their company's partition is not this writer's (INGEST_OWNERSHIP_FILE)",
      labelNames: ['table'],
      registers: [registry],
    }),
    companiesNotOwned: new Gauge({
      name: 'pda_ingest_companies_not_owned',
      help: 'Company files in the data directory whose company this writer no longer applies (remove-unowned removes them)',
      registers: [registry],
    }),
    lag: new Gauge({
      name: 'pda_ingest_consumer_lag',
      help: 'Messages between the last applied offset and the partition high watermark',
      labelNames: ['topic', 'partition'],
      registers: [registry],
    }),
    batchDuration: new Histogram({
      name: 'pda_ingest_batch_duration_seconds',
      help: 'Decode + apply + commit time of one batch',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    connected: new Gauge({
      name: 'pda_ingest_kafka_connected',
      help: '1 while the consumer is connected and in its group',
      registers: [registry],
    }),
    companyFilesOpened: new Counter({
      name: 'pda_ingest_company_files_opened_total',
      help: 'Company files opened by the writer (cache misses: the file was not open)',
      registers: [registry],
    }),
    companyFilesEvicted: new Counter({
      name: 'pda_ingest_company_files_evicted_total',
      help: 'Company files closed to make room in the writer cache (batches wider than the bound)',
      registers: [registry],
    }),
    companyFilesClosedIdle: new Counter({
      name: 'pda_ingest_company_files_closed_idle_total',
      help: 'Company files closed because no batch wrote to them for INGEST_IDLE_CLOSE_S',
      registers: [registry],
    }),
    openCompanyFiles: new Gauge({
      name: 'pda_ingest_open_company_files',
      help: 'Company files held open by the writer after the last batch',
      registers: [registry],
    }),
    openCompanyFilesMax: new Gauge({
      name: 'pda_ingest_open_company_files_max',
      help: 'Bound of the writer cache of company files (INGEST_MAX_OPEN_COMPANIES, or from the descriptor limit)',
      registers: [registry],
    }),
    statementsEvicted: new Counter({
      name: 'pda_ingest_statement_cache_evictions_total',
      help: 'Prepared statements dropped by the writer to stay within INGEST_MAX_STATEMENTS_PER_FILE per open file (prepared again when needed)',
      registers: [registry],
    }),
    statementsHeld: new Gauge({
      name: 'pda_ingest_statement_cache_size',
      help: 'Prepared statements held by the writer over control.sqlite and its open company files, after the last batch',
      registers: [registry],
    }),
    registryWaiting: new Gauge({
      name: 'pda_ingest_schema_registry_waiting',
      help: '1 while consumption waits for the schema registry (a writer schema of an Avro record could not be fetched), else 0',
      registers: [registry],
    }),
    registryFetches: new Counter({
      name: 'pda_ingest_schema_registry_fetches_total',
      help: 'Writer schema fetches from the schema registry by outcome (ok, error: retried, unusable: not Avro)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    writerSchemas: new Gauge({
      name: 'pda_ingest_writer_schemas',
      help: 'Avro writer schemas held (one per registry id seen)',
      registers: [registry],
    }),
    storageFault: new Gauge({
      name: 'pda_ingest_storage_fault',
      help: '1 while applying is paused by this storage fault of the data directory (kind: full, read_only, io), else 0; retried every 2 s',
      labelNames: ['kind'],
      registers: [registry],
    }),
    companiesOutOfService: new Gauge({
      name: 'pda_ingest_companies_out_of_service',
      help: 'Companies whose file is out of service (state: damaged = found deleted or corrupt, waiting for a rebuild; rebuilding)',
      labelNames: ['state'],
      registers: [registry],
    }),
    catchUpEventsPerSecond: new Gauge({
      name: 'pda_ingest_catchup_events_per_second',
      help: 'Kafka messages consumed per second over the last 30 s (while caught up: the live rate); the rate behind pda_ingest_catchup_eta_seconds',
      registers: [registry],
    }),
    catchUpEtaSeconds: new Gauge({
      name: 'pda_ingest_catchup_eta_seconds',
      help: 'While catching up (consumer lag above INGEST_READY_MAX_LAG): seconds until caught up at the current rate (lag / rate); 0 when caught up; -1 when unknown (lag not measured yet, no progress, or the lag is not shrinking)',
      registers: [registry],
    }),
    consumedMessages: 0,
    companyFaults: [],
    lastSourceTsMs: undefined,
    sourceCurrentAtMs: undefined,
  };
  metrics.companiesOutOfService.set({ state: 'damaged' }, 0);
  metrics.companiesOutOfService.set({ state: 'rebuilding' }, 0);
  metrics.registryWaiting.set(0);
  metrics.catchUpEtaSeconds.set(-1);
  // Each table's dead-letter count exists from the start at 0: a series first scraped at 1 is no
  // increase to Prometheus, and the alerts on dead letters (PdaIngestApiKeyDeadLetter: a key change
  // not applied) must see the first one (operator-tools/monitoring/alerts.yml).
  for (const table of SOURCE_TABLES) metrics.events.inc({ table, outcome: 'dead_lettered' }, 0);
  new Gauge({
    name: 'pda_ingest_freshness_seconds',
    help: 'now - source commit time (source.ts_ms) of the last applied change; absent before the first',
    registers: [registry],
    collect() {
      if (metrics.lastSourceTsMs !== undefined) this.set((now() - metrics.lastSourceTsMs) / 1000);
    },
  });
  new Gauge({
    name: 'pda_ingest_source_lag_seconds',
    help: 'now - the source time up to which every change is known applied (the later of the last applied change and the last heartbeat confirmed while caught up); grows when the source, Debezium or ingest stalls, not while the source is idle; absent before the first',
    registers: [registry],
    collect() {
      const current = Math.max(metrics.lastSourceTsMs ?? 0, metrics.sourceCurrentAtMs ?? 0);
      if (current > 0) this.set(Math.max(0, (now() - current) / 1000));
    },
  });
  return metrics;
}
