/**
 * `pnpm --filter @pda/ingest run remove-unowned [--company <uuid>]... [--dry-run]`: same INGEST_*
 * environment as `start`, with INGEST_OWNERSHIP_FILE and INGEST_WRITER_NAME. Removes the company
 * files of INGEST_DATA_DIR whose company this writer no longer applies (the ownership file gave
 * its partition to another writer: kafka/writer-ownership.ts), all of them or the ones named. Refuses (exit 2,
 * one line, nothing removed) a company the ownership file still assigns to this writer, and any
 * removal while the writer answers on its admin port (stop it first: one writer per data
 * directory). Prints `{"removed":[…],"dryRun":bool}` as one JSON line.
 */
import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import { companyPartition, isUuid } from '@pda/projections/model';
import { removeCompanyFiles } from '@pda/projections/write';
import { ConfigError, type IngestConfig, parseConfig } from './config.ts';
import { resolvedDataDir } from './generations.ts';
import { unownedCompanyFiles } from './kafka/writer-ownership.ts';

const USAGE = 'usage: remove-unowned [--company <uuid>]... [--dry-run]';

await runCli(USAGE, async () => {
  const { values: args } = parseArgs({
    args: cliArgs(),
    strict: true,
    allowPositionals: false,
    options: {
      company: { type: 'string', multiple: true },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  let config: IngestConfig;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    throw error instanceof ConfigError ? new UsageError(error.message) : error;
  }
  const ownership = config.ownership;
  if (!ownership)
    throw new UsageError(
      'remove-unowned needs INGEST_OWNERSHIP_FILE and INGEST_WRITER_NAME (a writer split by company)',
    );
  const dataDir = resolvedDataDir(config.dataDir) ?? config.dataDir;
  const unowned = unownedCompanyFiles(dataDir, ownership);
  let removing = unowned;
  if (args.company !== undefined) {
    for (const id of args.company) {
      if (!isUuid(id)) throw new UsageError(`--company ${id}: not a uuid`);
      const partition = companyPartition(id, ownership.partitions);
      if (ownership.applied.includes(partition))
        throw new UsageError(
          `refused: ${ownership.file} still assigns company ${id} (partition ${partition}) to writer "${ownership.writer}"`,
        );
    }
    removing = unowned.filter((id) => args.company?.includes(id));
  }
  const host = config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host;
  const running = await fetch(`http://${host}:${config.admin.port}/healthz`, {
    signal: AbortSignal.timeout(2000),
  }).then(
    () => true,
    () => false,
  );
  if (running && !args['dry-run'])
    throw new UsageError(
      `refused: an ingest answers on ${host}:${config.admin.port}; stop writer "${ownership.writer}" first (one writer per data directory)`,
    );
  if (!args['dry-run']) removeCompanyFiles(dataDir, removing);
  process.stdout.write(`${JSON.stringify({ removed: removing, dryRun: args['dry-run'] })}\n`);
});
