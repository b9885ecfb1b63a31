import { openFileLimit, openFileLimitProblem } from '@pda/projections/model';
import { buildApp } from './app.ts';
import { ConfigError, parseConfig } from './config.ts';
import { startServer } from './server.ts';

/** Entry point: the only place that reads process.env. Bad configuration → one line, exit 2. */
async function main(): Promise<void> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`api: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const tooLow = openFileLimitProblem(openFileLimit(), 'the api');
  if (tooLow) {
    process.stderr.write(`api: ${tooLow}\n`);
    process.exit(2);
  }
  const app = await buildApp(config);
  await startServer(app, config);
}

main().catch((error: unknown) => {
  process.stderr.write(`api: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
