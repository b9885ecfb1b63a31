import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';

/**
 * Listens and shuts down gracefully: on SIGTERM/SIGINT stop accepting connections, let in-flight
 * requests finish (Fastify's close waits for them), close projection handles (onClose), exit 0.
 */
export async function startServer(app: FastifyInstance, config: Config): Promise<void> {
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  await app.listen({ host: config.host, port: config.port });
}
