import { readSyncState } from '@pda/projections/read';
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import { changesHandler } from '../changes/changes-handler.ts';
import { HeldRequests } from '../changes/held-requests.ts';
import { tenantRoute } from '../routing/contract-route.ts';

/** How often a company file with held requests is checked for a commit (changes/held-requests.ts). */
export const COMMIT_CHECK_MS = 25;

/**
 * GET /v1/changes: the change feed, followed live with `wait` (additive to v1). Its held requests
 * are counted by the gauge pda_api_held_requests (the streams among them also by
 * pda_api_open_streams) and answered at once when the api closes (plugins/drain.ts: before it
 * waits for its connections to end).
 */
export default async function changesRoutes(app: FastifyInstance): Promise<void> {
  const held = new HeldRequests({
    max: app.config.maxHeldRequests,
    tickMs: COMMIT_CHECK_MS,
    mark: (companyId) => {
      const state = readSyncState(app.projections.company(companyId));
      return { generation: state.generation, lastChangedUs: state.lastChangedUs };
    },
    onRefused: () => app.metrics.recordRefusal('held_per_process'),
  });
  new Gauge({
    name: 'pda_api_held_requests',
    help: 'Change-feed requests held by wait until a commit or their timeout (at most API_MAX_HELD_REQUESTS)',
    registers: [app.metrics.registry],
    collect() {
      this.set(held.held);
    },
  });
  // A soak (bench/pipeline/soak.ts) watches both return to 0: a stream that never released its
  // slot would show here before the held gauge fills up.
  new Gauge({
    name: 'pda_api_open_streams',
    help: 'Change-feed streams open now (each also counted in pda_api_held_requests)',
    registers: [app.metrics.registry],
    collect() {
      this.set(held.streams);
    },
  });
  app.beforeDrain(() => held.close());
  app.route(tenantRoute(app, 'listChanges', changesHandler(app, held)));
}
