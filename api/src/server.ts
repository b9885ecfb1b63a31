import { type AdminServer, startAdminServer } from '@pda/admin-http';
import { openFileLimit } from '@pda/projections/model';
import type { FastifyInstance, FastifyListenOptions } from 'fastify';
import type { Config } from './config.ts';
import { descriptorPlan } from './connections/descriptor-plan.ts';

/**
 * Listens and shuts down gracefully: on SIGTERM/SIGINT stop accepting connections, let the open
 * ones end by themselves (plugins/drain.ts, at most API_DRAIN_TIMEOUT_MS), close projection handles
 * (onClose), exit 0.
 * The admin port (/healthz, /metrics) is opened first, so a busy admin port refuses to start
 * before partners can reach the process.
 */
export async function startServer(app: FastifyInstance, config: Config): Promise<void> {
  const admin = await startAdmin(app, config);
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    Promise.all([app.close(), admin.close()]).then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  // Connections beyond the plan are closed on arrival (and counted) instead of taking descriptors
  // the process needs for itself (connections/descriptor-plan.ts).
  const plan = descriptorPlan(openFileLimit());
  app.server.maxConnections = plan.maxConnections;
  app.server.on('drop', () => app.metrics.recordRefusal('too_many_connections'));
  // Fastify hands these to net.Server.listen; its type does not name reusePort (Node 23.1+).
  const listen: FastifyListenOptions & { reusePort: boolean } = {
    host: config.host,
    port: config.port,
    reusePort: config.reusePort,
  };
  await app.listen(listen);
  app.log.info(
    { openFileLimit: plan.limit ?? null, maxConnections: plan.maxConnections },
    'connections bounded',
  );
}

/** The admin server on the app's metrics (port 0 picks a free port: the log line says which). */
export async function startAdmin(app: FastifyInstance, config: Config): Promise<AdminServer> {
  await app.ready();
  const admin = await startAdminServer({ ...config.admin, registry: app.metrics.registry });
  app.log.info({ host: config.admin.host, port: admin.port }, 'admin server listening (/healthz, /metrics)');
  return admin;
}
