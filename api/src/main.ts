import { openFileLimit, openFileLimitProblem } from '@pda/projections/model';
import { startTracing, type Tracing } from '@pda/tracing';
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
  let tracing: Tracing;
  try {
    tracing = startTracing({ serviceName: 'pda-api' });
  } catch (error) {
    process.stderr.write(`api: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const app = await buildApp(config, { tracing });
  if (tracing.settings.enabled)
    app.log.info({ endpoint: tracing.settings.endpoint, service: tracing.settings.serviceName }, 'traces on');
  // What the last requests traced is sent before the process ends.
  app.addHook('onClose', () => tracing.shutdown());
  await startServer(app, config);
}

main().catch((error: unknown) => {
  process.stderr.write(`api: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
