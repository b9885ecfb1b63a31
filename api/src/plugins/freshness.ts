import { confirmedCurrentAt, readIngestState } from '@pda/projections/read';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';

/**
 * `Data-Current-As-Of` on every authenticated answer (docs/public-data-api-v1.md, "Freshness"):
 * the source time up to which every change is known visible — the last heartbeat ingest confirmed
 * (confirmedCurrentAt: about a second behind real time while the pipeline is current, with the
 * connector's 1 s heartbeats) — so a partner knows what "current" means for the page it just read.
 * Never ahead of the page: test/freshness-header.e2e.test.ts holds it to that.
 *
 * Only to a request whose key and company were accepted (auth's preValidation set its tenant):
 * it follows the whole pipeline (and without heartbeats, every tenant's commits), so an anonymous
 * caller (health, version, a 401, an unknown path) watching it would learn when other companies write.
 *
 * Read in onRequest, before the request reads its page, so the page is at least as current as the
 * header says: ingest records that time only after the changes it covers have committed. Read from
 * control.sqlite at most every READ_EVERY_MS; a value kept that long is older, never newer, than
 * the truth. No header while no time is known or control.sqlite cannot be read (health says why).
 */

const READ_EVERY_MS = 100;

export default fp(
  async (app, options: AppOptions) => {
    let readAtMs = Number.NEGATIVE_INFINITY;
    let header: string | undefined;
    const current = (): string | undefined => {
      const now = options.now();
      if (now - readAtMs < READ_EVERY_MS) return header;
      readAtMs = now;
      try {
        const at = confirmedCurrentAt(readIngestState(app.projections.control()));
        header = at === null ? undefined : new Date(at).toISOString();
      } catch {
        header = undefined;
      }
      return header;
    };
    const readBefore = new WeakMap<FastifyRequest, string>();
    app.addHook('onRequest', async (request) => {
      const operation = request.routeOptions.config.operation;
      if (operation === undefined || operation.anonymous) return;
      const value = current();
      if (value !== undefined) readBefore.set(request, value);
    });
    // After auth's preValidation (this plugin depends on pda-auth), which refuses a request
    // without an accepted key and company before this hook runs.
    app.addHook('preValidation', async (request, reply) => {
      const value = readBefore.get(request);
      if (value !== undefined && request.tenant !== null && !reply.sent) {
        reply.header('data-current-as-of', value);
      }
    });
  },
  { name: 'pda-freshness', fastify: '5.x', dependencies: ['pda-projections', 'pda-auth'] },
);
