// What Debezium's reselect post processor costs on company-keyed partitions (PDA_DATA_PARTITIONS,
// docs/operations.md, "Partitioned topics"): with it, every update of a row that leaves a TOASTed
// column unchanged makes Debezium SELECT that column by the event's key and carry its value; the
// peer, measured in the same run, is the same partitioned connector without the post processor
// (the event keeps Debezium's placeholder, as with the shipped single-partition connector).
//
//   pnpm --filter @pda/bench exec node pipeline/reselect-cost.ts [--rows 10000] [--notes-kb 16] [--rounds 2]
//
// A private database (`stack.sh database create` with the replica identity), ROWS sites of one
// company with notes of about NOTES_KB KiB of hex text (TOASTed), then per round and variant a
// private connector streaming (snapshot.mode=no_data) while one UPDATE of every row's name commits;
// timed from the commit until the sites topic holds ROWS events; Kafka Connect's CPU over that time
// from /proc (the stack's own connector idles meanwhile). Everything private is removed at the end.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { partitionedConnectorOverlay, stackDir } from '@pda/dev-world/stack';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaBrokers, readStackEnv, stackPgClient } from '../shared/stack-env.ts';
import {
  createBenchDatabase,
  deletePrefixTopics,
  dropBenchDatabase,
  startBenchConnector,
} from './parts/source.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    'notes-kb': { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
  },
});
const rows = Number(values.rows);
const notesKb = Number(values['notes-kb']);
const rounds = Number(values.rounds);
if (!(Number.isInteger(rows) && rows > 0 && notesKb > 0 && Number.isInteger(rounds) && rounds > 0))
  throw new Error('--rows, --notes-kb and --rounds must be positive numbers');

const PARTITIONS = 4;
const suffix = randomBytes(3).toString('hex');
const database = `pda_bench_reselect_${suffix}`;
const connectPid = Number(readFileSync(join(stackDir(), 'run', 'connect.pid'), 'utf8'));
/** Kafka Connect's user + system CPU so far, in ms (clock ticks of 10 ms). */
function connectCpuMs(): number {
  const fields = readFileSync(`/proc/${connectPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const full = partitionedConnectorOverlay(PARTITIONS);
const withoutReselect = Object.fromEntries(
  Object.entries(full).filter(([k]) => k !== 'post.processors' && !k.startsWith('reselector.')),
);

console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
process.env.PDA_DATA_PARTITIONS = String(PARTITIONS);
createBenchDatabase(database);
const client = stackPgClient(database);
await client.connect();
const kafka = new Kafka({ clientId: 'bench-reselect', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
try {
  const company = (
    await client.query<{ id: string }>(
      "INSERT INTO companies (name, currency) VALUES ('reselect', 'EUR') RETURNING id",
    )
  ).rows[0]!.id;
  await client.query(
    `INSERT INTO sites (company_id, name, notes)
     SELECT $1, 'site ' || g, (SELECT string_agg(md5(random()::text || g || i), '') FROM generate_series(1, $3) i)
     FROM generate_series(1, $2) g`,
    [company, rows, Math.ceil((notesKb * 1024) / 32)],
  );
  const size = (
    await client.query<{ text: string; stored: string; toast: string }>(
      `SELECT avg(octet_length(notes))::int AS text, avg(pg_column_size(notes))::int AS stored,
              pg_size_pretty(pg_total_relation_size(reltoastrelid)) AS toast
       FROM sites, pg_class WHERE pg_class.relname = 'sites' GROUP BY reltoastrelid`,
    )
  ).rows[0]!;
  console.log(
    `inputs: ${rows} sites, notes ${size.text} bytes of text (${size.stored} stored, TOAST table ${size.toast}), ${PARTITIONS} partitions, ${rounds} rounds`,
  );
  for (let round = 1; round <= rounds; round++) {
    for (const [variant, overrides] of [
      ['reselect', full],
      ['peer (no reselect)', withoutReselect],
    ] as const) {
      const connector = await startBenchConnector({
        name: `pda-bench-reselect-${variant.startsWith('peer') ? 'peer' : 'on'}-${round}-${suffix}`,
        database,
        format: 'avro',
        snapshotMode: 'no_data',
        overrides,
      });
      const topic = `${connector.topicPrefix}.public.sites`;
      try {
        // The connector streams once its slot exists: a change it must deliver first.
        await client.query("UPDATE companies SET name = name || '.' WHERE id = $1", [company]);
        for (let i = 0; ; i++) {
          if ((await admin.listTopics()).includes(`${connector.topicPrefix}.public.companies`)) break;
          if (i > 1200) throw new Error('the connector did not stream within 60 s');
          await new Promise((r) => setTimeout(r, 50));
        }
        const cpu0 = connectCpuMs();
        const t0 = performance.now();
        await client.query(`UPDATE sites SET name = name || '.'`);
        for (;;) {
          const topics = await admin.listTopics();
          // Right after Debezium created the topic, the broker may not yet lead every partition.
          const offsets = topics.includes(topic) ? await admin.fetchTopicOffsets(topic).catch(() => []) : [];
          if (offsets.reduce((n, p) => n + Number(p.high), 0) >= rows) break;
          if (performance.now() - t0 > 600_000) throw new Error('not every update arrived within 10 min');
          await new Promise((r) => setTimeout(r, 25));
        }
        const ms = performance.now() - t0;
        const cpu = connectCpuMs() - cpu0;
        console.log(
          `round ${round} ${variant}: ${rows} updates in ${(ms / 1000).toFixed(2)} s = ${Math.round((rows / ms) * 1000)} events/s; Connect CPU ${(cpu / 1000).toFixed(2)} s = ${Math.round((cpu * 1000) / rows)} µs per event`,
        );
      } finally {
        await connector.remove();
        await deletePrefixTopics(admin, connector.topicPrefix);
        const registry = readStackEnv().PDA_SCHEMA_REGISTRY_URL;
        const subjects = (await (await fetch(`${registry}/subjects`)).json()) as string[];
        for (const subject of subjects.filter((s) => s.startsWith(`${connector.topicPrefix}.`))) {
          await fetch(`${registry}/subjects/${subject}`, { method: 'DELETE' });
          await fetch(`${registry}/subjects/${subject}?permanent=true`, { method: 'DELETE' });
        }
      }
    }
  }
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await admin.disconnect();
  await client.end();
  dropBenchDatabase(database);
}
