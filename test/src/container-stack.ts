// The e2e stack in containers, started with testcontainers: the images dev-world/containers/build-images.sh
// builds here (pda/postgres, pda/kafka, pda/registry, pda/connect), provisioned with the same SQL and registered
// with the same connector.json as the native stack (dev-world/stack), on host networking with free ports.
// It answers the same interface as the native stack: a stack env file (`<dir>/env`, the lines
// dev-world/stack/stack.sh writes) that the tests read through readStackEnv / loadStackEnv.
//
// testcontainers' reaper image cannot be pulled here, so it is disabled (container-setup.ts) and
// everything started here is stopped by `stop()`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPartitions, partitionedConnectorOverlay } from '@pda/dev-world/stack';
import { freePort } from '@pda/projections/testing';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { repoRoot } from './stack-env.ts';

/** The pins the images are tagged with (dev-world/stack/versions.env). */
function versions(): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const line of readFileSync(join(repoRoot, 'dev-world/stack/versions.env'), 'utf8').split('\n')) {
    const match = /^(PDA_[A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match?.[1]) pins[match[1]] = match[2] ?? '';
  }
  return pins;
}

export const CONTAINER_IMAGES = (() => {
  const pins = versions();
  return {
    postgres: `pda/postgres:${pins.PDA_PG_MAJOR}`,
    kafka: `pda/kafka:${pins.PDA_KAFKA_VERSION}`,
    connect: `pda/connect:${pins.PDA_DEBEZIUM_VERSION}`,
    registry: `pda/registry:${pins.PDA_APICURIO_REGISTRY_VERSION}`,
  };
})();

export interface ContainerStack {
  /** The stack dir holding `env`, as PDA_STACK_DIR. */
  readonly stackDir: string;
  readonly env: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

const DEBEZIUM = { user: 'debezium', password: 'debezium' };
const CONNECTOR_NAME = 'pda-postgres';

async function poll(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`container stack: ${what} not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function startPostgres(port: number, capturedTables: string): Promise<StartedTestContainer> {
  return new GenericContainer(CONTAINER_IMAGES.postgres)
    .withNetworkMode('host')
    .withEnvironment({
      POSTGRES_USER: 'pda',
      POSTGRES_PASSWORD: 'pda',
      POSTGRES_DB: 'pda',
      // postgres, psql and the image's pg_isready health check all default to PGPORT.
      PGPORT: String(port),
      PDA_DEBEZIUM_USER: DEBEZIUM.user,
      PDA_DEBEZIUM_PASSWORD: DEBEZIUM.password,
      // The registry's role (dev-world/stack/sql/registry-db.sql); startRegistry logs in with it.
      PDA_REGISTRY_DB_PASSWORD: 'pda_registry',
      PDA_CAPTURED_TABLES: capturedTables,
      PDA_DATA_PARTITIONS: String(dataPartitions()),
    })
    .withCopyFilesToContainer([
      {
        source: join(repoRoot, 'dev-world/stack/compose/postgres-init.sh'),
        target: '/docker-entrypoint-initdb.d/10-pda.sh',
        mode: 0o644,
      },
      { source: join(repoRoot, 'dev-world/db/schema.sql'), target: '/pda/schema.sql', mode: 0o644 },
      {
        source: join(repoRoot, 'dev-world/db/partitioned-identity.sql'),
        target: '/pda/partitioned-identity.sql',
        mode: 0o644,
      },
    ])
    .withCopyDirectoriesToContainer([
      { source: join(repoRoot, 'dev-world/stack/sql'), target: '/pda/sql', mode: 0o755 },
    ])
    .withCommand(['postgres', '-c', 'wal_level=logical', '-c', 'max_slot_wal_keep_size=2GB'])
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .start();
}

async function startKafka(port: number, controllerPort: number): Promise<StartedTestContainer> {
  return new GenericContainer(CONTAINER_IMAGES.kafka)
    .withNetworkMode('host')
    .withEnvironment({
      CLUSTER_ID: 'bQANdzH4SU6wThWjxS3cZg',
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_CONTROLLER_QUORUM_VOTERS: `1@127.0.0.1:${controllerPort}`,
      KAFKA_LISTENERS: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
      KAFKA_NUM_PARTITIONS: '1',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
      KAFKA_DEFAULT_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_HEALTHCHECK_PORT: String(port),
    })
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .start();
}

/** The schema registry, its SQL storage in the database the postgres init made (pda_registry). */
async function startRegistry(port: number, pgPort: number): Promise<StartedTestContainer> {
  return new GenericContainer(CONTAINER_IMAGES.registry)
    .withNetworkMode('host')
    .withEnvironment({
      REGISTRY_PORT: String(port),
      REGISTRY_DATASOURCE_URL: `jdbc:postgresql://127.0.0.1:${pgPort}/pda_registry`,
      REGISTRY_DATASOURCE_USERNAME: 'pda_registry',
      REGISTRY_DATASOURCE_PASSWORD: 'pda_registry',
    })
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000)
    .start();
}

async function startConnect(
  port: number,
  kafkaPort: number,
  pgPort: number,
  registryUrl: string,
): Promise<StartedTestContainer> {
  return (
    new GenericContainer(CONTAINER_IMAGES.connect)
      .withNetworkMode('host')
      .withEnvironment({
        BOOTSTRAP_SERVERS: `127.0.0.1:${kafkaPort}`,
        GROUP_ID: 'pda-connect',
        CONFIG_STORAGE_TOPIC: 'pda-connect-configs',
        OFFSET_STORAGE_TOPIC: 'pda-connect-offsets',
        STATUS_STORAGE_TOPIC: 'pda-connect-status',
        // Debezium confirms the LSN to PostgreSQL when offsets flush (default 60 s).
        OFFSET_FLUSH_INTERVAL_MS: '1000',
        ADVERTISED_HOST_NAME: '127.0.0.1',
        CONNECT_LISTENERS: `http://127.0.0.1:${port}`,
        CONNECT_REST_ADVERTISED_PORT: String(port),
        CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR: '1',
        CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR: '1',
        CONNECT_STATUS_STORAGE_REPLICATION_FACTOR: '1',
        CONNECT_OFFSET_STORAGE_PARTITIONS: '1',
        CONNECT_STATUS_STORAGE_PARTITIONS: '1',
        CONNECT_CONFIG_PROVIDERS: 'env',
        CONNECT_CONFIG_PROVIDERS_ENV_CLASS: 'org.apache.kafka.common.config.provider.EnvVarConfigProvider',
        // What dev-world/stack/connector.json references through ${env:...}.
        PDA_PG_HOST: '127.0.0.1',
        PDA_PG_PORT: String(pgPort),
        PDA_PG_DATABASE: 'pda',
        PDA_DEBEZIUM_USER: DEBEZIUM.user,
        PDA_DEBEZIUM_PASSWORD: DEBEZIUM.password,
        PDA_REGISTRY_URL: registryUrl,
      })
      // The image's HEALTHCHECK asks port 8083; here the worker listens on `port`: polled below.
      .withWaitStrategy(Wait.forLogMessage(/Kafka Connect started/))
      .withStartupTimeout(180_000)
      .start()
  );
}

/**
 * connector.json + table.include.list (+ connector-partitioned.json when PDA_DATA_PARTITIONS > 1), as
 * dev-world/stack/lib/connect.sh registers it; waits until RUNNING.
 */
async function registerConnector(connectUrl: string, capturedTables: string): Promise<void> {
  await poll(
    'Kafka Connect plugins',
    async () =>
      (await (await fetch(`${connectUrl}/connector-plugins`)).text()).includes(
        'io.debezium.connector.postgresql.PostgresConnector',
      ),
    180_000,
  );
  const config = {
    ...JSON.parse(readFileSync(join(repoRoot, 'dev-world/stack/connector.json'), 'utf8')),
    ...partitionedConnectorOverlay(dataPartitions()),
    'table.include.list': capturedTables
      .split(',')
      .map((table) => `public.${table}`)
      .join(','),
  };
  const response = await fetch(`${connectUrl}/connectors/${CONNECTOR_NAME}/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(config),
  });
  if (!response.ok) throw new Error(`connector registration: ${response.status} ${await response.text()}`);
  await poll(
    'connector RUNNING',
    async () => {
      const status = (await (await fetch(`${connectUrl}/connectors/${CONNECTOR_NAME}/status`)).json()) as {
        connector: { state: string };
        tasks: { state: string; trace?: string }[];
      };
      const failed = status.tasks.find((task) => task.state === 'FAILED');
      if (failed) throw new Error(`connector FAILED: ${failed.trace?.slice(0, 1000)}`);
      return status.connector.state === 'RUNNING' && status.tasks[0]?.state === 'RUNNING';
    },
    120_000,
  );
}

export async function startContainerStack(): Promise<ContainerStack> {
  const capturedTables = execFileSync(
    process.execPath,
    [join(repoRoot, 'dev-world/stack/captured-tables.ts')],
    {
      encoding: 'utf8',
    },
  ).trim();
  const [pgPort, kafkaPort, controllerPort, connectPort, registryPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ] as [number, number, number, number, number];
  const registryUrl = `http://127.0.0.1:${registryPort}`;
  const started: StartedTestContainer[] = [];
  const stop = async () => {
    // Connect first: it holds the replication slot's connection.
    for (const container of started.reverse()) await container.stop({ timeout: 10_000 }).catch(() => {});
  };
  try {
    const [postgres, kafka] = await Promise.all([
      startPostgres(pgPort, capturedTables),
      startKafka(kafkaPort, controllerPort),
    ]);
    started.push(postgres, kafka);
    started.push(await startRegistry(registryPort, pgPort));
    started.push(await startConnect(connectPort, kafkaPort, pgPort, registryUrl));
    const connectUrl = `http://127.0.0.1:${connectPort}`;
    await registerConnector(connectUrl, capturedTables);
    const stackDir = mkdtempSync(join(tmpdir(), 'pda-container-stack-'));
    const env: Record<string, string> = {
      PDA_PG_HOST: '127.0.0.1',
      PDA_PG_PORT: String(pgPort),
      PDA_PG_DATABASE: 'pda',
      PDA_PG_USER: 'pda',
      PDA_PG_PASSWORD: 'pda',
      PDA_KAFKA_BROKERS: `127.0.0.1:${kafkaPort}`,
      PDA_CONNECT_URL: connectUrl,
      PDA_REGISTRY_URL: registryUrl,
      PDA_SCHEMA_REGISTRY_URL: `${registryUrl}/apis/ccompat/v7`,
      PDA_CONNECTOR_FORMAT: 'avro',
      PDA_TOPIC_PREFIX: 'pda',
      PDA_CONNECTOR_NAME: CONNECTOR_NAME,
      PDA_SLOT_NAME: 'pda_slot',
      PDA_DEBEZIUM_USER: DEBEZIUM.user,
      PDA_DEBEZIUM_PASSWORD: DEBEZIUM.password,
      PDA_STACK_DIR: stackDir,
    };
    writeFileSync(
      join(stackDir, 'env'),
      `# Written by test/src/container-stack.ts: the container stack's addresses.\n${Object.entries(env)
        .map(([name, value]) => `export ${name}=${value}`)
        .join('\n')}\n`,
    );
    return { stackDir, env, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
