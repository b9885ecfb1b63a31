// The setup the two storage cases share (disk-full, read-only): the data directory on a file system
// the case mounts, a private Debezium connector, two companies and an ingest process on the
// connector's topics; and the cleanup after them, whatever happened.
import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import { type PrivateConnector, startPrivateConnector } from '../../src/private-connector.ts';
import { kafkaClient } from '../../src/stack-env.ts';
import { type IngestProcess, startIngest } from './ingest-process.ts';
import { type Mounted, type StorageReadyz, storageReadyz } from './storage.ts';
import { createCompanies, faultTolerantPool } from './writer.ts';

export interface StartedStorageCase<M extends Mounted> {
  readonly mounted: M;
  readonly connector: PrivateConnector;
  readonly company: string;
  readonly other: string;
  readonly groupId: string;
  readonly ingest: IngestProcess;
  readonly readyz: () => Promise<StorageReadyz>;
}

/**
 * Call in the case's describe block: registers the cleanup (ingest killed, the file system
 * unmounted, the connector removed, the pool ended). `start()`, in the test after its caseRecord,
 * mounts the data directory with `mount`, starts a private connector that captures only what is
 * written from now on (the projection stays small enough for the mount), creates two companies of
 * 20 sites and starts ingest on the connector's topics, and resolves once ingest has caught up.
 */
export function storageCase<M extends Mounted>(name: string, mount: () => Promise<M>) {
  const pool = faultTolerantPool();
  let mounted: M | undefined;
  let connector: PrivateConnector | undefined;
  let ingest: IngestProcess | undefined;
  afterAll(async () => {
    if (ingest?.alive()) await ingest.kill9();
    await mounted?.unmount();
    await connector?.remove(kafkaClient(`fault-${name}-cleanup`));
    await pool.end();
  });
  return {
    pool,
    async start(): Promise<StartedStorageCase<M>> {
      mounted = await mount();
      connector = await startPrivateConnector(name.replaceAll('-', ''), { 'snapshot.mode': 'no_data' });
      const [company, other] = (await createCompanies(pool, name, 2, 20)) as [string, string];
      const groupId = `e2e-fault-${name}-${randomUUID()}`;
      ingest = startIngest({
        dataDir: mounted.dataDir,
        groupId,
        env: { INGEST_TOPIC_PREFIX: connector.topicPrefix },
      });
      const readyz = storageReadyz(await ingest.adminPort());
      await ingest.firstAppliedSeconds(120_000);
      await ingest.caughtUpSeconds(120_000);
      return { mounted, connector, company, other, groupId, ingest, readyz };
    },
  };
}
