// The running stack captures exactly the table registry's tables: `stack.sh up` takes the list from
// dev-world/stack/captured-tables.ts, builds publication pda_publication and the Debezium role's grants
// from it (dev-world/stack/sql/publication.sql) and adds it to the connector as table.include.list
// (dev-world/stack/lib/connect.sh); neither publication.sql nor connector.json names a table.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TABLE_NAMES } from '@pda/schemas/registry';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectRequest, debeziumClient, pgPool, repoRoot, stackEnv } from './src/stack-env.ts';

const sorted = (names: readonly string[]): string[] => [...names].sort();

describe('the captured tables of the running stack', () => {
  const env = stackEnv();
  let pool: pg.Pool;

  beforeAll(() => {
    pool = pgPool(env);
  });

  afterAll(async () => {
    await pool.end();
  });

  test('publication pda_publication holds exactly the registry tables', async () => {
    const { rows } = await pool.query<{ schemaname: string; tablename: string }>(
      "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = 'pda_publication'",
    );
    expect(rows.filter((row) => row.schemaname !== 'public')).toEqual([]);
    expect(sorted(rows.map((row) => row.tablename))).toEqual(sorted(TABLE_NAMES));
  });

  test('the Debezium login role can SELECT every registry table', async () => {
    // Its own session, as Debezium's snapshot reads them (the grants of publication.sql).
    const client = debeziumClient(env);
    await client.connect();
    try {
      const denied: string[] = [];
      for (const table of TABLE_NAMES) {
        try {
          await client.query(`SELECT * FROM public.${client.escapeIdentifier(table)} LIMIT 0`);
        } catch (error) {
          denied.push(`${table}: ${(error as Error).message}`);
        }
      }
      expect(denied).toEqual([]);
    } finally {
      await client.end();
    }
  });

  test("the registered connector's table.include.list is exactly the registry tables", async () => {
    const config = (await connectRequest(`/connectors/${env.connectorName}/config`)) as Record<
      string,
      string
    >;
    const list = (config['table.include.list'] ?? '').split(',');
    expect(sorted(list)).toEqual(sorted(TABLE_NAMES.map((table) => `public.${table}`)));
  });

  test('`stack.sh up` again leaves the connector alone (its config is unchanged)', () => {
    // globalSetup ran `up` already: this one must find the same config and skip the PUT, which
    // would restart the task (lib/connect.sh logs "registering connector" only when it PUTs).
    const up = spawnSync('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), 'up'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(up.status, `stack.sh up failed:\n${up.stderr}`).toBe(0);
    expect(up.stderr).not.toContain('registering connector');
    expect(up.stderr).not.toContain('restarting connector');
    expect(up.stderr).toContain(`connector ${env.connectorName} RUNNING`);
  });
});
