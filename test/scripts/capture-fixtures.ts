// Re-captures test/fixtures/debezium/events.jsonl from the REAL stack: runs the shared CDC scenario
// (test/src/cdc-scenario.ts) against PostgreSQL and saves the Debezium records it produced, as JSON
// lines {topic, partition, offset, key, value} with the records' exact bytes. The same run also
// captures the same changes as Avro into test/fixtures/debezium-avro/, with the writer schemas they
// name. Each format comes from a private connector (JsonConverter with inline schemas; the shipped
// Avro converter and the registry), its topics renamed to `pda.*`: the stack's own connector writes
// whichever format PDA_CONNECTOR_FORMAT chose.
//
//   pnpm --filter @pda/test capture-fixtures        (starts the stack if needed; idempotent)
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { avroReader, converterConfig, usedSchemas } from '../src/avro-records.ts';
import {
  capturedTables,
  deleteRows,
  expectedSnapshotCounts,
  expectedStreamCounts,
  insertRows,
  largeNotes,
  newScenarioIds,
  scenarioKeyIds,
  snapshotSelects,
  updateRows,
} from '../src/cdc-scenario.ts';
import {
  type CapturedEvent,
  collectEvents,
  fixtureLine,
  keyId,
  opOf,
  payloadOf,
  reached,
  tally,
} from '../src/debezium-capture.ts';
import { startPrivateConnector } from '../src/private-connector.ts';
import { startSnapshotConnector } from '../src/snapshot-connector.ts';
import { kafkaClient, loadStackEnv, pgPool, repoRoot, stackEnv } from '../src/stack-env.ts';

const output = join(repoRoot, 'test/fixtures/debezium/events.jsonl');
const avroDir = join(repoRoot, 'test/fixtures/debezium-avro');

async function main(): Promise<void> {
  const up = spawnSync('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), 'up'], { stdio: 'inherit' });
  if (up.status !== 0) throw new Error('dev-world/stack/stack.sh up failed');
  loadStackEnv();
  const env = stackEnv();
  const pool = pgPool(env);
  const kafka = kafkaClient('pda-capture-fixtures', env);
  const ids = newScenarioIds();
  const ours = scenarioKeyIds(ids);
  const isOurs = (event: Parameters<typeof keyId>[0]) => ours.has(keyId(event) ?? '');
  // The Avro twin: streams the same commits (no initial snapshot of the stack's other rows).
  const avro = await startPrivateConnector('avrocap', {
    ...converterConfig('avro'),
    'snapshot.mode': 'no_data',
  });
  const avroTopics = capturedTables.map((table) => `${avro.topicPrefix}.public.${table}`);
  const json = converterConfig('json');
  const jsonConnector = await startPrivateConnector('jsoncap', { ...json, 'snapshot.mode': 'no_data' });
  const topics = capturedTables.map((table) => `${jsonConnector.topicPrefix}.public.${table}`);
  const renamedFrom =
    (prefix: string) =>
    (topic: string): string =>
      topic.replace(`${prefix}.`, `${env.topicPrefix}.`).replace(`.${prefix}`, `.${env.topicPrefix}`);

  try {
    await insertRows(pool, ids, largeNotes());
    // The creates must be in Kafka before the snapshot runs, or a partition would hold the `r`
    // ahead of the older `c` (real, but not the plain story this fixture tells).
    const creates = Object.fromEntries(
      Object.entries(expectedStreamCounts).filter(([k]) => k.endsWith(':c')),
    );
    creates['api_key_companies:c'] = 1; // the second one comes from the key change below
    for (const t of [topics, avroTopics]) {
      await collectEvents(kafka, {
        topics: t,
        match: (e) => isOurs(e) && opOf(e) === 'c',
        until: (e) => reached(e, creates),
      });
    }

    // `r` events: a second connector snapshots this run's rows into the same topics, as a
    // re-snapshot of the real connector would (one per format).
    for (const [prefix, t, overrides] of [
      [jsonConnector.topicPrefix, topics, json],
      [avro.topicPrefix, avroTopics, converterConfig('avro')],
    ] as const) {
      const snapshot = await startSnapshotConnector({
        topicPrefix: prefix,
        selects: snapshotSelects(ids),
        overrides,
      });
      try {
        await collectEvents(kafka, {
          topics: t,
          match: (e) => isOurs(e) && opOf(e) === 'r',
          until: (events) => reached(events, expectedSnapshotCounts),
        });
      } finally {
        await snapshot.remove();
      }
    }

    await updateRows(pool, ids);
    await deleteRows(pool, ids);

    const events = await collectEvents(kafka, {
      topics,
      match: isOurs,
      until: (events) => reached(events, { ...expectedStreamCounts, ...expectedSnapshotCounts }),
    });
    const heartbeat = await collectEvents(kafka, {
      topics: [`__debezium-heartbeat.${jsonConnector.topicPrefix}`],
      match: () => true,
      until: (found) => found.length >= 1,
      timeoutMs: 30_000,
    });

    const all = [...sortByCommitOrder(events), ...heartbeat];
    assertPartitionOrder(all);
    mkdirSync(join(output, '..'), { recursive: true });
    const renamedJson = renamedFrom(jsonConnector.topicPrefix);
    writeFileSync(output, `${all.map((e) => fixtureLine(e, renamedJson(e.topic))).join('\n')}\n`);
    console.log(`wrote ${all.length} events to ${output}`);
    console.log(tally(all));

    const avroEvents = await collectEvents(kafka, {
      topics: avroTopics,
      match: isOurs,
      until: (found) => reached(found, { ...expectedStreamCounts, ...expectedSnapshotCounts }),
    });
    const avroHeartbeat = await collectEvents(kafka, {
      topics: [`__debezium-heartbeat.${avro.topicPrefix}`],
      match: () => true,
      until: (found) => found.length >= 1,
      timeoutMs: 30_000,
    });
    const allAvro = [...sortByCommitOrder(avroEvents), ...avroHeartbeat];
    assertPartitionOrder(allAvro);
    const renamed = renamedFrom(avro.topicPrefix);
    mkdirSync(avroDir, { recursive: true });
    writeFileSync(
      join(avroDir, 'events.jsonl'),
      `${allAvro.map((e) => fixtureLine(e, renamed(e.topic))).join('\n')}\n`,
    );
    const reader = avroReader();
    const raw = allAvro.map((e) => ({
      topic: e.topic,
      partition: e.partition,
      offset: String(e.offset),
      key: e.keyBytes ?? null,
      value: e.valueBytes ?? null,
    }));
    await reader.resolve(raw);
    writeFileSync(join(avroDir, 'schemas.json'), `${JSON.stringify(usedSchemas(reader, raw), null, 1)}\n`);
    console.log(`wrote ${allAvro.length} Avro events and their writer schemas to ${avroDir}`);
  } finally {
    await avro.remove(kafka);
    await jsonConnector.remove(kafka);
    await pool.end();
  }
}

/**
 * PostgreSQL commit order (source.lsn), so a replay of the file applies a company before its sites;
 * a tombstone follows its delete, snapshot reads keep their production order (they share one lsn).
 */
function sortByCommitOrder(events: CapturedEvent[]): CapturedEvent[] {
  const lsnOf = new Map<CapturedEvent, number>();
  const byTopicOffset = new Map(events.map((e) => [`${e.topic}/${e.partition}/${e.offset}`, e]));
  const lsn = (event: CapturedEvent): number => {
    const source = payloadOf(event.value)?.source as { lsn?: number } | undefined;
    if (source?.lsn !== undefined) return source.lsn;
    const previous = byTopicOffset.get(`${event.topic}/${event.partition}/${event.offset - 1}`);
    return previous ? lsn(previous) : Number.MAX_SAFE_INTEGER;
  };
  for (const event of events) lsnOf.set(event, lsn(event));
  return [...events].sort(
    (a, b) => lsnOf.get(a)! - lsnOf.get(b)! || a.timestamp - b.timestamp || a.offset - b.offset,
  );
}

/** A replay of the file must see each partition in Kafka's order. */
function assertPartitionOrder(events: CapturedEvent[]): void {
  const last = new Map<string, number>();
  for (const event of events) {
    const partition = `${event.topic}/${event.partition}`;
    if ((last.get(partition) ?? -1) > event.offset) {
      throw new Error(`commit order disagrees with offsets in ${partition} at ${event.offset}; re-run`);
    }
    last.set(partition, event.offset);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
