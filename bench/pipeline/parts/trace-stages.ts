import type { ReadableSpan } from '@opentelemetry/sdk-trace';

/**
 * Where a change's time goes inside the pipeline, read from ingest's batch spans
 * (ingest/src/observability/batch-trace.ts) for pipeline/freshness.ts: per change of `companyId`
 * listed on a batch span, from its source commit to the batch's Kafka time (the oldest record's),
 * to fetched, to decoded, to applied (its SQLite commit), in ms.
 */
export interface ChangeStages {
  readonly commitToKafka: number;
  readonly kafkaToFetched: number;
  readonly fetchedToDecoded: number;
  readonly decodedToApplied: number;
  readonly commitToApplied: number;
}

const ms = (time: readonly [number, number]) => time[0] * 1000 + time[1] / 1e6;

export function changeStages(spans: readonly ReadableSpan[], companyId: string): ChangeStages[] {
  const children = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    if (parent) children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const stages: ChangeStages[] = [];
  for (const batch of spans) {
    if (batch.name !== 'ingest.batch') continue;
    const parts = new Map((children.get(batch.spanContext().spanId) ?? []).map((s) => [s.name, s]));
    const fetch = parts.get('ingest.fetch');
    const decode = parts.get('ingest.decode');
    const apply = parts.get('ingest.apply');
    if (!decode || !apply) continue;
    const fetched = ms(batch.startTime);
    const inKafka = fetch ? ms(fetch.startTime) : fetched;
    const decoded = ms(decode.endTime);
    const applied = ms(apply.endTime);
    const companies = batch.attributes['pda.change.company'] as readonly string[] | undefined;
    const commits = batch.attributes['pda.change.source_commit_ms'] as readonly number[] | undefined;
    (commits ?? []).forEach((commit, i) => {
      if (companies?.[i] !== companyId) return;
      stages.push({
        commitToKafka: inKafka - commit,
        kafkaToFetched: fetched - inKafka,
        fetchedToDecoded: decoded - fetched,
        decodedToApplied: applied - decoded,
        commitToApplied: applied - commit,
      });
    });
  }
  return stages;
}
