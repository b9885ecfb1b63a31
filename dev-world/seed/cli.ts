// `pnpm --filter @pda/dev-world seed -- --companies 3 --sites 120 ... --seed 42 [--run R] [--truncate]`
import { parseArgs } from 'node:util';
import {
  CONNECTION_OPTIONS,
  CONNECTION_USAGE,
  connectClient,
  resolveConnection,
} from '@pda/operator-tools/pg';
import { cliArgs, runCli, UsageError, wholeNumber } from '@pda/projections/cli';
import pino from 'pino';
import { DEFAULT_COUNTS, type SeedCounts } from './counts.ts';
import { seedDatabase } from './seed-database.ts';

const d = DEFAULT_COUNTS;
const USAGE = `usage: pnpm --filter @pda/dev-world seed -- [options]
  --companies N          companies to create (default ${d.companies})
  --sites N              sites per company (default ${d.sites})
  --contacts-per-site N  contacts per site (default ${d.contactsPerSite})
  --services N           services per company (default ${d.services})
  --categories N         equipment categories per company (default ${d.categories})
  --equipment N          equipment per company (default ${d.equipment})
  --consumables N        consumables per company (default ${d.consumables})
  --seed S               random seed; the same seed gives the same rows (default 42)
  --run R                id namespace; the same seed and run give the same ids too
                         (default: a new random run, so seeding again adds new companies)
  --batch-size N         rows per COPY batch (default 10000)
  --truncate             empty all captured tables (API keys included) before seeding
${CONNECTION_USAGE}`;

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      companies: { type: 'string' },
      sites: { type: 'string' },
      'contacts-per-site': { type: 'string' },
      services: { type: 'string' },
      categories: { type: 'string' },
      equipment: { type: 'string' },
      consumables: { type: 'string' },
      seed: { type: 'string' },
      run: { type: 'string' },
      'batch-size': { type: 'string' },
      truncate: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      ...CONNECTION_OPTIONS,
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const counts: SeedCounts = {
    companies: wholeNumber('companies', values.companies, d.companies),
    sites: wholeNumber('sites', values.sites, d.sites),
    contactsPerSite: wholeNumber('contacts-per-site', values['contacts-per-site'], d.contactsPerSite),
    services: wholeNumber('services', values.services, d.services),
    categories: wholeNumber('categories', values.categories, d.categories),
    equipment: wholeNumber('equipment', values.equipment, d.equipment),
    consumables: wholeNumber('consumables', values.consumables, d.consumables),
  };
  if (counts.equipment > 0 && counts.categories === 0) {
    throw new UsageError('--equipment needs --categories >= 1');
  }
  const batchSize = wholeNumber('batch-size', values['batch-size'], 10_000);
  if (batchSize < 1) throw new UsageError('--batch-size must be >= 1');
  const seed = values.seed ?? '42';
  if (seed.trim() === '') throw new UsageError('--seed must not be empty');
  if (values.run?.trim() === '') throw new UsageError('--run must not be empty');
  return {
    counts,
    seed,
    ...(values.run === undefined ? {} : { run: values.run }),
    batchSize,
    truncate: values.truncate ?? false,
    help: values.help ?? false,
    connection: {
      'database-url': values['database-url'],
      sslmode: values.sslmode,
      sslrootcert: values.sslrootcert,
    },
  };
}

await runCli(USAGE, async () => {
  const args = parse(cliArgs());
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const logger = pino({ name: 'seed' }, pino.destination(2));
  const client = await connectClient(resolveConnection(args.connection).config);
  try {
    const result = await seedDatabase(client, { ...args, logger });
    logger.info({ byTable: result.byTable }, 'seeded');
    process.stdout.write(
      `seeded ${result.rows} rows for ${result.companyIds.length} companies in ${result.seconds.toFixed(1)} s (${result.rowsPerSecond} rows/s), seed ${JSON.stringify(args.seed)}, run ${JSON.stringify(result.run)}\n`,
    );
  } finally {
    await client.end();
  }
});
