/**
 * What /readyz answers (admin-server.ts): ready when connected, caught up within
 * INGEST_READY_MAX_LAG, the schema registry usable and the storage accepting writes; with the
 * details an operator reads.
 */

import type { StorageState } from '../batch/storage-state.ts';
import type { KafkaSource } from '../kafka/source.ts';
import type { IngestMetrics } from '../observability/metrics.ts';
import type { AvroSupport } from '../schema-registry/index.ts';

/** /readyz: `withCompanies` = the admin request carried the token, so company ids may be listed. */
export function readinessReport(parts: {
  /** Ready only while the summed consumer lag is at most this (IngestConfig.readyMaxLag). */
  maxLag: number;
  metrics: IngestMetrics;
  avro: AvroSupport;
  storage: StorageState;
  source: () => KafkaSource | undefined;
  rebuilds: { list(): readonly unknown[] };
}) {
  const { maxLag, metrics, avro, storage, rebuilds } = parts;
  return (withCompanies: boolean) => {
    const source = parts.source();
    const lag = source?.lag();
    const connected = source?.connected() ?? false;
    const ready =
      connected &&
      lag !== undefined &&
      lag.measured &&
      lag.total <= maxLag &&
      avro.ready() &&
      !storage.faulted();
    const current = Math.max(metrics.lastSourceTsMs ?? 0, metrics.sourceCurrentAtMs ?? 0);
    return {
      ready,
      detail: {
        connected,
        lag: lag?.measured ? lag.total : null,
        max_lag: maxLag,
        // How far behind the source the projections are known to be (heartbeats count while idle).
        source_lag_seconds: current > 0 ? Math.max(0, (Date.now() - current) / 1000) : null,
        schema_registry: avro.health(),
        // Full, read-only or failing data directory: nothing is applied until it accepts writes.
        storage: storage.health(),
        // Damaged company files (out of service until rebuilt); the others are applied. Not a
        // readiness failure: the process serves every other company. Counted for everyone, named
        // only to the admin token (admin-port/admin-server.ts).
        company_files: {
          damaged: metrics.companyFaults.filter((f) => f.state === 'damaged').length,
          rebuilding: metrics.companyFaults.filter((f) => f.state === 'rebuilding').length,
          ...(withCompanies && {
            out_of_service: metrics.companyFaults.map((f) => ({
              company_id: f.companyId,
              state: f.state,
              reason: f.reason,
              detected_at: new Date(f.detectedAtMs).toISOString(),
            })),
          }),
        },
        ...(withCompanies && { company_rebuilds: rebuilds.list().slice(-10) }),
      },
    };
  };
}
