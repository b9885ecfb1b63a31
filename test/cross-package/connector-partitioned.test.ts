// Company-keyed partitions (PDA_DATA_PARTITIONS, dev-world/stack/README.md, "Partitioned topics"): with
// 1, the default, every path registers dev-world/stack/connector.json unchanged; with N > 1 the native
// stack (lib/connect.sh, jq), compose's registration job (compose/register-connector.sh, plain bash)
// and the connectors TypeScript registers (dev-world/stack/connector-config.ts) all add exactly the settings of
// dev-world/stack/connector-partitioned.json with N in place of its placeholder. The overlay and
// dev-world/db/partitioned-identity.sql name tables, so they are compared with the table registry here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPartitions, partitionedConnectorOverlay } from '@pda/dev-world/stack';
import { CONTROL_TABLE_NAMES, TENANT_TABLE_NAMES } from '@pda/schemas/registry';
import { describe, expect, it } from 'vitest';
import { shippedConnectorConfig } from '../src/avro-records.ts';
import { repoRoot } from '../src/stack-env.ts';

const TABLES = 'sites,companies';
const read = (path: string) =>
  JSON.parse(readFileSync(join(repoRoot, path), 'utf8')) as Record<string, string>;

function bash(script: string, env: Record<string, string>) {
  return spawnSync('bash', ['-c', script], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

/** What `stack.sh up` registers (table.include.list of TABLES). */
function nativeConfig(env: Record<string, string>): Record<string, string> {
  const run = bash(
    `source dev-world/stack/lib/common.sh; source dev-world/stack/lib/connect.sh; CAPTURED_TABLES=${TABLES}; connector_desired_config`,
    env,
  );
  if (run.status !== 0) throw new Error(run.stderr.trim());
  return JSON.parse(run.stdout);
}

/** The raw JSON compose's connect-register job sends (the script up to its request). */
function composeBody(env: Record<string, string>): string {
  const script = readFileSync(join(repoRoot, 'dev-world/stack/compose/register-connector.sh'), 'utf8');
  const upToConfig = script.slice(0, script.indexOf('\nresponse='));
  return execFileSync('bash', ['-c', `${upToConfig}\nprintf '%s' "$config"`], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PDA_CAPTURED_TABLES: TABLES,
      PDA_CONNECT_URL: 'http://127.0.0.1:1',
      PDA_CONNECTOR_JSON: join(repoRoot, 'dev-world/stack/connector.json'),
      PDA_CONVERTERS_DIR: join(repoRoot, 'dev-world/stack/converters'),
      PDA_CONNECTOR_OVERLAY_JSON: join(repoRoot, 'dev-world/stack/connector-partitioned.json'),
      ...env,
    },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** JSON.parse keeps the last of two equal keys silently; Connect's parser must never see two. */
function parseWithoutDuplicates(text: string): Record<string, string> {
  const parsed = JSON.parse(text) as Record<string, string>;
  for (const key of Object.keys(parsed)) {
    const count = text.split(`"${key}"`).length - 1;
    expect(count, `key ${key} appears ${count} times`).toBe(1);
  }
  return parsed;
}

const tableList = { 'table.include.list': 'public.sites,public.companies' };

/** Exactly what N = 4 adds to or changes in connector.json. */
const PARTITIONED_4 = {
  'topic.creation.default.partitions': '4',
  'topic.creation.groups': 'single',
  'topic.creation.single.include':
    '[^.]+\\.public\\.(companies|api_keys|api_key_companies),__debezium-heartbeat\\..+',
  'topic.creation.single.partitions': '1',
  'topic.creation.single.replication.factor': '-1',
  'topic.creation.single.cleanup.policy': 'compact',
  'topic.creation.single.delete.retention.ms': '604800000',
  'topic.creation.single.min.compaction.lag.ms': '604800000',
  'tombstones.on.delete': 'false',
  'message.key.columns':
    'public.sites:id,company_id;public.site_contacts:id,company_id;public.services:id,company_id;' +
    'public.equipment_categories:id,company_id;public.equipment:id,company_id;public.consumables:id,company_id',
  transforms: 'byCompany',
  'transforms.byCompany.type': 'io.debezium.transforms.partitions.PartitionRouting',
  'transforms.byCompany.predicate': 'tenantTopics',
  'transforms.byCompany.partition.payload.fields': 'change.company_id',
  'transforms.byCompany.partition.topic.num': '4',
  'transforms.byCompany.partition.hash.function': 'java',
  predicates: 'tenantTopics',
  'predicates.tenantTopics.type': 'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
  'predicates.tenantTopics.pattern':
    '[^.]+\\.public\\.(sites|site_contacts|services|equipment_categories|equipment|consumables)',
  'post.processors': 'reselector',
  'reselector.type': 'io.debezium.processors.reselect.ReselectColumnsPostProcessor',
  'reselector.reselect.unavailable.values': 'true',
  'reselector.reselect.null.values': 'false',
  'reselector.reselect.use.event.key': 'true',
};

describe('PDA_DATA_PARTITIONS', () => {
  it('1 (and unset) registers connector.json unchanged on every path', () => {
    const shipped = read('dev-world/stack/connector.json');
    const native = nativeConfig({});
    expect(native).toEqual({ ...shipped, ...tableList });
    expect(nativeConfig({ PDA_DATA_PARTITIONS: '1' })).toEqual(native);
    expect(parseWithoutDuplicates(composeBody({ PDA_DATA_PARTITIONS: '1' }))).toEqual(native);
    expect(composeBody({ PDA_DATA_PARTITIONS: '1' })).toBe(composeBody({}));
    expect(shippedConnectorConfig(tableList, { partitions: 1 })).toEqual(native);
    expect(partitionedConnectorOverlay(1)).toEqual({});
  });

  it('4 adds exactly the company-keyed settings, the same on every path', () => {
    const shipped = read('dev-world/stack/connector.json');
    const native = nativeConfig({ PDA_DATA_PARTITIONS: '4' });
    expect(native).toEqual({ ...shipped, ...tableList, ...PARTITIONED_4 });
    expect(parseWithoutDuplicates(composeBody({ PDA_DATA_PARTITIONS: '4' }))).toEqual(native);
    expect(shippedConnectorConfig(tableList, { partitions: 4 })).toEqual(native);
    expect(partitionedConnectorOverlay(4)).toEqual(PARTITIONED_4);
  });

  it('combines with another format the same way on both bash paths', () => {
    const env = { PDA_DATA_PARTITIONS: '12', PDA_CONNECTOR_FORMAT: 'json' };
    const native = nativeConfig(env);
    expect(parseWithoutDuplicates(composeBody(env))).toEqual(native);
    expect(native['transforms.byCompany.partition.topic.num']).toBe('12');
    expect(native['value.converter']).toBe('org.apache.kafka.connect.json.JsonConverter');
  });

  it('a bad count is refused with one line on every path', () => {
    for (const bad of ['0', '-1', 'four', '10001', '1.5']) {
      const native = bash(
        `source dev-world/stack/lib/common.sh; source dev-world/stack/lib/connect.sh; CAPTURED_TABLES=${TABLES}; connector_desired_config`,
        { PDA_DATA_PARTITIONS: bad },
      );
      expect(native.status, bad).toBe(1);
      expect(native.stderr).toBe(
        `stack: error: PDA_DATA_PARTITIONS='${bad}': expected a whole number from 1 to 10000 (partitions per tenant topic; 1, the default, is one partition)\n`,
      );
      expect(() => composeBody({ PDA_DATA_PARTITIONS: bad }), bad).toThrow(
        `PDA_DATA_PARTITIONS='${bad}': expected a whole number from 1 to 10000`,
      );
      expect(() => dataPartitions(bad), bad).toThrow(/expected a whole number from 1 to 10000/);
    }
  });

  it('the overlay and the identity script name the registry tenant and control tables', () => {
    const overlay = read('dev-world/stack/connector-partitioned.json');
    const keyed = overlay['message.key.columns']?.split(';').map((entry) => entry.split(':'));
    expect(keyed?.map(([table]) => table)).toEqual(TENANT_TABLE_NAMES.map((t) => `public.${t}`));
    for (const [, columns] of keyed ?? []) expect(columns).toBe('id,company_id');
    const tenant = new RegExp(`^${overlay['predicates.tenantTopics.pattern']}$`);
    const single = (overlay['topic.creation.single.include'] ?? '')
      .split(',')
      .map((p) => new RegExp(`^${p}$`));
    for (const table of TENANT_TABLE_NAMES) {
      expect(tenant.test(`pda.public.${table}`), table).toBe(true);
      expect(
        single.some((p) => p.test(`pda.public.${table}`)),
        table,
      ).toBe(false);
    }
    for (const table of CONTROL_TABLE_NAMES) {
      expect(tenant.test(`pda.public.${table}`), table).toBe(false);
      expect(
        single.some((p) => p.test(`pdaprivate1.public.${table}`)),
        table,
      ).toBe(true);
    }
    expect(single.some((p) => p.test('__debezium-heartbeat.pda'))).toBe(true);
    const sql = readFileSync(join(repoRoot, 'dev-world/db/partitioned-identity.sql'), 'utf8');
    const indexed = [
      ...sql.matchAll(/CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS (\w+) ON (\w+) \(company_id, id\);/g),
    ];
    expect(indexed.map((m) => m[2])).toEqual([...TENANT_TABLE_NAMES]);
    for (const m of indexed) expect(m[1]).toBe(`${m[2]}_company_id_id_identity`);
    expect(sql).toContain(`IN (${TENANT_TABLE_NAMES.map((t) => `'${t}'`).join(', ')})`);
  });

  it('the one-partition group keeps the data topics cleanup settings', () => {
    const shipped = read('dev-world/stack/connector.json');
    const overlay = read('dev-world/stack/connector-partitioned.json');
    const group = (config: Record<string, string>, name: string) =>
      Object.fromEntries(
        Object.entries(config)
          .filter(([k]) => k.startsWith(`topic.creation.${name}.`) && !/[.](partitions|include)$/.test(k))
          .map(([k, v]) => [k.slice(`topic.creation.${name}.`.length), v]),
      );
    expect(group(overlay, 'single')).toEqual(group(shipped, 'default'));
  });

  it("compose's postgres init applies the identity script only with N > 1, after the schema", () => {
    const bin = mkdtempSync(join(tmpdir(), 'pda-psql-'));
    try {
      // A stand-in for psql that records the file each call applies.
      writeFileSync(
        join(bin, 'psql'),
        '#!/usr/bin/env bash\nwhile (($#)); do [[ "$1" == -f ]] && echo "$2" >>"$PSQL_LOG"; shift; done\n',
        { mode: 0o755 },
      );
      const applied = (n: string) => {
        const log = join(bin, `log-${n}`);
        const run = bash('bash dev-world/stack/compose/postgres-init.sh', {
          PATH: `${bin}:${process.env.PATH}`,
          PSQL_LOG: log,
          PDA_DATA_PARTITIONS: n,
          PDA_CAPTURED_TABLES: TABLES,
          POSTGRES_USER: 'pda',
          POSTGRES_DB: 'pda',
          POSTGRES_PASSWORD: 'x',
          PDA_DEBEZIUM_USER: 'debezium',
          PDA_DEBEZIUM_PASSWORD: 'x',
          PDA_REGISTRY_DB_PASSWORD: 'x',
        });
        return {
          status: run.status,
          stderr: run.stderr,
          files: run.status === 0 ? readFileSync(log, 'utf8').trim().split('\n') : [],
        };
      };
      expect(applied('1').files).toEqual([
        '/pda/sql/roles.sql',
        '/pda/schema.sql',
        '/pda/sql/publication.sql',
        '/pda/sql/registry-db.sql',
      ]);
      expect(applied('4').files).toEqual([
        '/pda/sql/roles.sql',
        '/pda/schema.sql',
        '/pda/sql/publication.sql',
        '/pda/partitioned-identity.sql',
        '/pda/sql/registry-db.sql',
      ]);
      expect(applied('x')).toMatchObject({
        status: 1,
        stderr: expect.stringContaining("PDA_DATA_PARTITIONS='x'"),
      });
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('up refuses tenant topics that exist with another partition count', () => {
    const stackDir = mkdtempSync(join(tmpdir(), 'pda-partitions-'));
    try {
      const data = join(stackDir, 'kafka', 'data');
      const check = (n: string) =>
        bash(
          'set -euo pipefail; source dev-world/stack/lib/common.sh; source dev-world/stack/lib/kafka.sh; source dev-world/stack/lib/topics.sh; data_topics_partitions_check',
          { PDA_STACK_DIR: stackDir, PDA_DATA_PARTITIONS: n },
        );
      // A new stack has no log dir yet (set -e in stack.sh: a failing probe must not end `up`).
      expect(check('4').status).toBe(0);
      for (const dir of ['pda.public.sites-0', 'pda.public.sites-1.abc-delete', 'pda.public.companies-0'])
        mkdirSync(join(data, dir), { recursive: true });
      expect(check('1').status).toBe(0);
      const refused = check('4');
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(
        'stack: error: topic pda.public.sites has 1 partition(s) but PDA_DATA_PARTITIONS=4: existing topics cannot be re-partitioned; set PDA_DATA_PARTITIONS=1, or make a new deployment with new topics (stack.sh reset, or another PDA_STACK_DIR)\n',
      );
      for (let p = 1; p < 4; p++) mkdirSync(join(data, `pda.public.sites-${p}`));
      expect(check('4').status).toBe(0);
      expect(check('1').status).toBe(1);
    } finally {
      rmSync(stackDir, { recursive: true, force: true });
    }
  });
});
