/**
 * `pnpm --filter @pda/ingest start`: parse the configuration once, build the worker, run it until
 * SIGTERM/SIGINT (wait for every chunk handed to the apply thread, commit, disconnect; at most
 * INGEST_DRAIN_TIMEOUT_MS). A bad configuration (or an open-file limit too low to run) prints ONE
 * line and exits 2; an unrecoverable failure, or a drain cut short, exits 1 (the supervisor
 * restarts the process).
 */
import { openFileLimit, openFileLimitProblem } from '@pda/projections/model';
import { startTracing, type Tracing } from '@pda/tracing';
import { ConfigError, parseConfig } from './config.ts';
import { KafkaAuthenticationError } from './kafka/auth-failure.ts';
import { OwnershipMismatchError } from './kafka/writer-ownership.ts';
import { createLogger } from './logger.ts';
import { loadAvscTypes } from './schema-types.ts';
import { createWorker } from './worker.ts';

function loadConfig() {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

const config = loadConfig();
const tooFewDescriptors = openFileLimitProblem(openFileLimit(), 'ingest');
if (tooFewDescriptors) {
  process.stderr.write(`ingest: ${tooFewDescriptors}\n`);
  process.exit(2);
}
const logger = createLogger(config.logLevel);
const tracing = startIngestTracing();
const worker = createWorker(config, {
  logger,
  avscTypes: await loadAvscTypes(logger),
  ...(tracing.enabled && { tracer: tracing.tracer }),
});

/** Traces from the standard OTEL_* settings (docs/operations.md, "Traces"); a wrong one: exit 2. */
function startIngestTracing(): Tracing {
  try {
    const started = startTracing({ serviceName: 'pda-ingest' });
    if (started.settings.enabled)
      logger.info(
        { endpoint: started.settings.endpoint, service: started.settings.serviceName },
        'traces on',
      );
    return started;
  } catch (error) {
    process.stderr.write(`ingest: ${(error as Error).message}\n`);
    process.exit(2);
  }
}

// Process managers (pnpm, timeout, a shell's process group) often deliver the same signal
// more than once; only a repeat after 3 s means "stop now, skip the drain".
let firstSignalAt: number | undefined;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (firstSignalAt === undefined) firstSignalAt = Date.now();
    else if (Date.now() - firstSignalAt < 3000) return;
    else {
      logger.warn({ signal }, 'second signal: exiting without drain (uncommitted offsets are redelivered)');
      process.exit(130);
    }
    logger.info({ signal, drainTimeoutMs: config.drainTimeoutMs }, 'draining');
    worker.stop();
    // A drain that cannot end (the broker gone: the final commit and leaving the group retry for as
    // long as one waits, a full disk: the chunks being applied retry) is cut short. Offsets are
    // committed only after their changes are durable, so exiting commits nothing that was not
    // applied; what was applied and not committed is read again at the next start (at-least-once).
    setTimeout(() => {
      logger.warn(
        { signal, drainTimeoutMs: config.drainTimeoutMs },
        'drain did not finish within INGEST_DRAIN_TIMEOUT_MS: exiting without committing the offsets of unfinished work (it is read again at the next start; nothing is lost)',
      );
      process.exit(1);
    }, config.drainTimeoutMs).unref();
  });
}

worker.run().then(
  // What the last batches traced is sent before the process ends.
  () => tracing.shutdown().finally(() => process.exit(0)),
  (error: unknown) => {
    if (error instanceof KafkaAuthenticationError || error instanceof OwnershipMismatchError) {
      // Configuration, found at the first connection: one line, and the exit code of a bad setting
      // (a restart would be refused again; kafka/auth-failure.ts). So is a split writer whose
      // ownership file and tenant topics disagree on the number of partitions (kafka/writer-ownership.ts).
      logger.fatal(error.message);
      process.exit(2);
    }
    logger.fatal({ err: error }, 'ingest failed');
    process.exit(1);
  },
);
