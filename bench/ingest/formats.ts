/**
 * The three wire formats of change events, measured in ONE run (issue 14; NOT a test):
 *
 *   pnpm --filter @pda/bench exec node --max-semi-space-size=64 ingest/formats.ts [--events 100000] [--companies 300] [--decode-sample 50000] [--batch-bytes 16384]
 *
 * The same generated events (ingest/throughput.ts' mix: creates then 20 % updates over 300
 * companies) are written into fresh topics of the running stack's Kafka, in each format:
 *   - JSON with inline schemas (JsonConverter schemas.enable=true),
 *   - schema-less JSON (schemas.enable=false; ingest takes types from schemas/*.avsc),
 *   - Avro through the schema registry (the Confluent wire format Apicurio's converter writes), with
 *     the REAL writer schemas Debezium registered (test/fixtures/debezium-avro/schemas.json),
 *     registered in the stack's registry under this run's subjects; ingest fetches them by id;
 * each uncompressed, with gzip and with zstd producer compression (--compressions), in record batches of at most
 * --batch-bytes uncompressed bytes per topic (Kafka Connect's producer default, batch.size 16 KB).
 * For each: bytes per event on the broker's disk (the topics' log segment files in the stack's
 * Kafka data dir, divided by the events), kafkajs consume + decode on one thread (the main thread's
 * work, decompression included), and the ingest worker's steady rate (from the first applied chunk
 * on); per format, the decoder alone over an in-memory sample (µs per event, wall and CPU time, best
 * of five passes after a warm-up) and applyBatch alone on the decoded changes (the apply thread's
 * work; the same changes for every format, measured next to each format's runs). The machine's
 * bound for a variant is the slower of its two threads' work measured alone; the steady rate is
 * reported as a share of it. One JSON document on stdout.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createDecoder,
  type Decoder,
  loadAvscTypes,
  parseReplayLine,
  type RawRecord,
  registerKafkajsCodecs,
  WriterSchemas,
} from '@pda/ingest';
import {
  avroEventEncoder,
  type EncodedEvent,
  type EventInput,
  encodeEvent,
  sampleRow,
  uuidFor,
} from '@pda/ingest/testing';
import type { Change, SourceTable } from '@pda/projections/model';
import { ProjectionStore } from '@pda/projections/write';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { MIX, MIX_SLOTS } from '../shared/change-mix.ts';
import { benchWorker } from '../shared/ingest-worker.ts';
import { repoRoot } from '../shared/paths.ts';
import { kafkaBrokers, readStackEnv } from '../shared/stack-env.ts';
import { createDataTopics, fillTopics } from '../shared/topic-fill.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    events: { type: 'string', default: '100000' },
    companies: { type: 'string', default: '300' },
    'decode-sample': { type: 'string', default: '50000' },
    'batch-bytes': { type: 'string', default: '16384' },
    compressions: { type: 'string', default: 'none,gzip,zstd' },
  },
});
const N = Number(args.events);
const COMPANIES = Number(args.companies);
const SAMPLE = Math.min(Number(args['decode-sample']), N);
const BATCH_BYTES = Number(args['batch-bytes']);
// zstd through the codec ingest registers (Node's zlib): what the connector writes since the
// pipeline benchmark measured its cost (bench/pipeline/stages.ts). `--compressions` picks a subset.
const ALL_COMPRESSIONS = [
  ['none', CompressionTypes.None],
  ['gzip', CompressionTypes.GZIP],
  ['zstd', CompressionTypes.ZSTD],
] as const;
const COMPRESSIONS = ALL_COMPRESSIONS.filter(([name]) => args.compressions.split(',').includes(name));

type Format = 'json-inline-schema' | 'json-schemaless' | 'avro';
const FORMATS: readonly Format[] = ['json-inline-schema', 'json-schemaless', 'avro'];

function* inputs(): Generator<EventInput> {
  let lsn = 1_000_000;
  const ts = Date.now() - 60_000;
  for (let c = 0; c < COMPANIES; c++) {
    yield {
      table: 'companies',
      op: 'r',
      row: sampleRow('companies', c, uuidFor(c, 7)),
      lsn: lsn++,
      tsMs: ts,
    };
  }
  for (let i = COMPANIES; i < N; i++) {
    const table = MIX_SLOTS[i % MIX_SLOTS.length] as SourceTable;
    const n = i % 5 === 4 ? i - 40 : i;
    const row = sampleRow(table, n, uuidFor(n % COMPANIES, 7));
    yield { table, op: i % 5 === 4 ? 'u' : 'c', row, lsn: lsn++, tsMs: ts + Math.floor(i / 100) };
  }
}

function registryUrl(): string {
  const url = process.env.PDA_SCHEMA_REGISTRY_URL ?? readStackEnv().PDA_SCHEMA_REGISTRY_URL;
  if (!url) throw new Error('no PDA_SCHEMA_REGISTRY_URL: start the stack (bash dev-world/stack/stack.sh up)');
  return url;
}

/**
 * Registers the captured writer schemas of each table under `<prefix>.public.<table>-key|-value`
 * (Confluent-compatible API) and returns each table's ids and schemas.
 */
async function registerSchemas(prefix: string) {
  const file = JSON.parse(
    readFileSync(join(repoRoot, 'test/fixtures/debezium-avro/schemas.json'), 'utf8'),
  ) as Record<string, { name: string; namespace?: string }>;
  const find = (table: string, name: 'Key' | 'Envelope') => {
    const found = Object.values(file).find(
      (s) => s.name === name && s.namespace?.endsWith(`.public.${table}`),
    );
    if (!found) throw new Error(`no ${name} schema of ${table} in the Avro fixture`);
    return found;
  };
  const register = async (subject: string, schema: unknown): Promise<number> => {
    const response = await fetch(`${registryUrl()}/subjects/${subject}/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(schema) }),
    });
    if (!response.ok) throw new Error(`registering ${subject}: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { id: number }).id;
  };
  const tables = new Map<SourceTable, { keyId: number; key: unknown; valueId: number; value: unknown }>();
  for (const table of ['companies', ...MIX.map(([t]) => t)] as SourceTable[]) {
    const key = find(table, 'Key');
    const value = find(table, 'Envelope');
    tables.set(table, {
      keyId: await register(`${prefix}.public.${table}-key`, key),
      key,
      valueId: await register(`${prefix}.public.${table}-value`, value),
      value,
    });
  }
  return (table: SourceTable) => {
    const t = tables.get(table);
    if (!t) throw new Error(`no schemas registered for ${table}`);
    return t;
  };
}

async function encoderFor(format: Format, prefix: string): Promise<(input: EventInput) => EncodedEvent> {
  if (format === 'avro') {
    const encode = avroEventEncoder(await registerSchemas(prefix), { topicPrefix: prefix });
    // kafkajs takes Buffers as keys and values; fillTopics counts their bytes the same way.
    return (input) => encode(input) as unknown as EncodedEvent;
  }
  const inlineSchema = format === 'json-inline-schema';
  return (input) => encodeEvent(input, { topicPrefix: prefix, inlineSchema });
}

const round = (x: number) => Math.round(x * 100) / 100;

/**
 * The decoder alone over an in-memory sample: µs per event, best of five passes after a warm-up, as
 * wall time and as the process's CPU time (on a shared machine the wall time also counts the time
 * other processes held the core).
 */
function decodeMicros(decoder: Decoder, records: readonly RawRecord[]) {
  for (const r of records) decoder(r);
  let wall = Number.POSITIVE_INFINITY;
  let cpu = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 5; pass++) {
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    for (const r of records) decoder(r);
    const used = process.cpuUsage(cpuStart);
    wall = Math.min(wall, ((performance.now() - start) * 1000) / records.length);
    cpu = Math.min(cpu, (used.user + used.system) / records.length);
  }
  return { wall: round(wall), cpu: round(cpu) };
}

/**
 * The decoder alone over the REAL captured events (test/fixtures/debezium*: the same changes as JSON
 * with inline schemas and as Avro, written by Debezium), data topics only, repeated to `SAMPLE`
 * records: what real rows cost (6-digit timestamps, TOASTed notes), beside the generated mix.
 */
function capturedDecodeMicros(avscTypes: Awaited<ReturnType<typeof loadAvscTypes>>) {
  const read = (dir: string) =>
    readFileSync(join(repoRoot, 'test/fixtures', dir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .flatMap((line, i) => {
        const parsed = parseReplayLine(line, i + 1);
        return 'record' in parsed && parsed.record.topic.startsWith('pda.public.') ? [parsed.record] : [];
      });
  const writerSchemas = new WriterSchemas();
  const schemas = JSON.parse(
    readFileSync(join(repoRoot, 'test/fixtures/debezium-avro/schemas.json'), 'utf8'),
  ) as Record<string, unknown>;
  for (const [id, schema] of Object.entries(schemas)) writerSchemas.add(Number(id), JSON.stringify(schema));
  const out: Record<string, unknown> = {};
  for (const [name, dir] of [
    ['json-inline-schema', 'debezium'],
    ['avro', 'debezium-avro'],
  ] as const) {
    const records = read(dir);
    // Repeated with rising offsets, as a partition would deliver them.
    const sample = Array.from({ length: SAMPLE }, (_, i) => ({
      ...(records[i % records.length] as RawRecord),
      offset: String(i),
    }));
    const decoder = () =>
      createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes, writerSchemas });
    out[name] = { distinctEvents: records.length, ...decodeMicros(decoder(), sample) };
  }
  return out;
}

/** Bytes of the topics' log segments on the broker's disk (the stack's Kafka data dir). */
function bytesOnDisk(topics: readonly string[]): number {
  const dir = join(readStackEnv().PDA_STACK_DIR ?? join(repoRoot, '.stack'), 'kafka', 'data');
  let bytes = 0;
  for (const topic of topics) {
    for (const entry of readdirSync(dir).filter((d) => d.startsWith(`${topic}-`))) {
      for (const file of readdirSync(join(dir, entry)).filter((f) => f.endsWith('.log'))) {
        bytes += statSync(join(dir, entry, file)).size;
      }
    }
  }
  return bytes;
}

async function consumeAndDecode(kafka: Kafka, groupId: string, topics: string[], decoder: Decoder) {
  const consumer = kafka.consumer({ groupId, maxBytes: 16 * 2 ** 20, maxBytesPerPartition: 16 * 2 ** 20 });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  let seen = 0;
  let failures = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          const r = decoder({
            topic: batch.topic,
            partition: batch.partition,
            offset: m.offset,
            key: m.key,
            value: m.value,
          });
          if (r.type !== 'change') failures++;
        }
        seen += batch.messages.length;
        if (seen >= N) resolve();
      },
    });
  });
  const seconds = (performance.now() - start) / 1000;
  await consumer.disconnect();
  return { events: seen, notDecoded: failures, eventsPerSecond: Math.round(seen / seconds) };
}

async function ingestSteady(
  format: Format,
  prefix: string,
  avscTypes: Awaited<ReturnType<typeof loadAvscTypes>>,
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-formats-'));
  const { worker, metrics } = benchWorker({
    groupId: `${prefix}-ingest`,
    topicPrefix: prefix,
    dataDir,
    avscTypes,
    env: format === 'avro' ? { INGEST_SCHEMA_REGISTRY_URL: registryUrl() } : {},
  });
  const start = performance.now();
  const running = worker.run();
  const handledNow = async () => (await metrics.events.get()).values.reduce((s, v) => s + v.value, 0);
  let handled = 0;
  let first: { at: number; handled: number } | undefined;
  while (handled < N) {
    await new Promise((r) => setTimeout(r, 25));
    handled = await handledNow();
    if (!first && handled > 0) first = { at: performance.now(), handled };
  }
  const end = performance.now();
  const dead = (await metrics.events.get()).values
    .filter((v) => v.labels.outcome === 'dead_lettered')
    .reduce((s, v) => s + v.value, 0);
  worker.stop();
  await running;
  rmSync(dataDir, { recursive: true, force: true });
  return {
    events: handled,
    deadLettered: dead,
    endToEndEventsPerSecond: Math.round(handled / ((end - start) / 1000)),
    steadyEventsPerSecond: first ? Math.round((handled - first.handled) / ((end - first.at) / 1000)) : null,
  };
}

/** applyBatch alone on decoded changes, one thread, groups of 8,000 (the worker's usual apply call). */
function applyAlone(changes: readonly Change[]) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-formats-apply-'));
  const store = ProjectionStore.open({ dataDir: dir });
  let ms = 0;
  let applied = 0;
  for (let i = 0; i < changes.length; i += 8000) {
    const start = performance.now();
    applied += store.applyBatch(changes.slice(i, i + 8000)).applied;
    ms += performance.now() - start;
  }
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return { events: applied, eventsPerSecond: Math.round(applied / (ms / 1000)) };
}

async function main() {
  const loadAtStart = loadavg()[0] ?? 0;
  registerKafkajsCodecs(); // zstd
  const kafka = new Kafka({ clientId: 'bench-formats', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const avscTypes = await loadAvscTypes();
  const stamp = Date.now();
  const results: Record<string, unknown> = {};
  const capturedDecode = capturedDecodeMicros(avscTypes);
  process.stderr.write(`decode of the captured events: ${JSON.stringify(capturedDecode)}\n`);
  const created: string[] = [];
  try {
    for (const format of FORMATS) {
      const sample: RawRecord[] = [];
      const perCompression: Record<string, unknown> = {};
      let micros: { wall: number; cpu: number } | undefined;
      let apply: { events: number; eventsPerSecond: number } | undefined;
      for (const [compressionName, compression] of COMPRESSIONS) {
        const prefix = `benchfmt${stamp}${format.replace(/-/g, '')}${compressionName}`;
        const topics = ['companies', ...MIX.map(([t]) => t)].map((t) => `${prefix}.public.${t}`);
        await createDataTopics(admin, topics);
        created.push(prefix);
        const encode = await encoderFor(format, prefix);
        const sent = await fillTopics(
          kafka,
          (function* () {
            for (const input of inputs()) yield encode(input);
          })(),
          { compression, batchBytes: BATCH_BYTES },
        );
        const disk = bytesOnDisk(topics);
        // The writer schemas ingest would fetch, fetched once here for the in-memory peers.
        const writerSchemas = new WriterSchemas();
        const decoder = () =>
          createDecoder({ topicPrefix: prefix, bareDecimalMode: 'precise', avscTypes, writerSchemas });
        const records: RawRecord[] = [];
        let offset = 0;
        for (const input of inputs()) {
          if (records.length >= SAMPLE) break;
          const e = encode(input);
          records.push({
            topic: e.topic,
            partition: 0,
            offset: String(offset++),
            key: e.key,
            value: e.value,
          });
        }
        if (format === 'avro') {
          const { createSchemaResolver, createSchemaRegistryClient, createLogger } = await import(
            '@pda/ingest'
          );
          await createSchemaResolver({
            client: createSchemaRegistryClient({ url: registryUrl(), timeoutMs: 5000 }),
            schemas: writerSchemas,
            logger: createLogger('warn'),
          }).resolve(records);
        }
        if (!micros) {
          sample.push(...records);
          // The apply thread's work alone, on the same changes for every format, measured again
          // next to each format's runs: on a shared machine the load moves within one run.
          const d = decoder();
          const changes = sample.flatMap((r) => {
            const x = d(r);
            return x.type === 'change' ? [x.change] : [];
          });
          apply = applyAlone(changes);
          micros = decodeMicros(decoder(), sample);
        }
        const consume = await consumeAndDecode(kafka, `${prefix}-decode`, topics, decoder());
        const ingest = await ingestSteady(format, prefix, avscTypes);
        const bound = Math.min(consume.eventsPerSecond, apply?.eventsPerSecond ?? Number.POSITIVE_INFINITY);
        perCompression[compressionName] = {
          bytesPerEventSent: Math.round(sent / N),
          bytesPerEventOnDisk: Math.round(disk / N),
          consumeAndDecodeOneThread: consume,
          loadAverage1m: round(loadavg()[0] ?? 0),
          ingest,
          boundEventsPerSecond: bound,
          steadyShareOfBound: ingest.steadyEventsPerSecond
            ? round(ingest.steadyEventsPerSecond / bound)
            : null,
        };
        process.stderr.write(
          `${format} ${compressionName}: ${JSON.stringify(perCompression[compressionName])}\n`,
        );
      }
      results[format] = { decodeMicrosPerEvent: micros, applyAloneOneThread: apply, ...perCompression };
    }
  } finally {
    const topics = (await admin.listTopics()).filter((t) => created.some((p) => t.startsWith(`${p}.`)));
    await admin.deleteTopics({ topics }).catch(() => {});
    await admin.disconnect();
  }
  type Variant = { ingest: { steadyEventsPerSecond: number } };
  const steady = (format: Format, c: string) =>
    ((results[format] as Record<string, Variant>)[c] as Variant).ingest.steadyEventsPerSecond;
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'ingest-formats',
        machine: {
          cpu: cpus()[0]?.model,
          cores: cpus().length,
          memoryGb: Math.round(totalmem() / 2 ** 30),
          node: process.version,
          v8Flags: process.execArgv.filter((a) => a.startsWith('--max-')),
          loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0] ?? 0) },
        },
        inputs: {
          events: N,
          companies: COMPANIES,
          decodeSample: SAMPLE,
          recordBatchBytes: BATCH_BYTES,
          mix: Object.fromEntries(MIX),
          updatesShare: 0.2,
        },
        formats: results,
        decodeMicrosPerCapturedEvent: capturedDecode,
        avroSteadyOverJsonInlineSchema: Object.fromEntries(
          COMPRESSIONS.map(([name]) => [
            name,
            round(steady('avro', name) / steady('json-inline-schema', name)),
          ]),
        ),
      },
      null,
      2,
    )}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
