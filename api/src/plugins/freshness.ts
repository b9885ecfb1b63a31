import { readIngestState, sourceCurrentAt } from '@pda/projections/read';
import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';

/**
 * `Data-Current-As-Of` on every response (docs/public-data-api-v1.md, "Freshness"): the source time
 * up to which the projections are known current — the time /v1/health judges staleness by
 * (projections/projections-health.ts) — so a partner knows what "current" means for the page it
 * just read.
 *
 * Read before the request reads its page, so the page is at least as current as the header says:
 * ingest records that time only after the changes it covers have committed. Read from
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
        const at = sourceCurrentAt(readIngestState(app.projections.control()));
        header = at === null ? undefined : new Date(at).toISOString();
      } catch {
        header = undefined;
      }
      return header;
    };
    app.addHook('onRequest', async (_request, reply) => {
      const value = current();
      if (value !== undefined) reply.header('data-current-as-of', value);
    });
  },
  { name: 'pda-freshness', fastify: '5.x', dependencies: ['pda-projections'] },
);
