import { processOpenFilesBound } from '@pda/projections/model';
import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';
import { ProjectionFiles } from '../company-files/projection-files.ts';
import { API_DESCRIPTOR_RESERVE } from '../connections/descriptor-plan.ts';
import { ReadPool } from '../read-pool/read-pool.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Read-only projection handles (control + LRU of company files). */
    projections: ProjectionFiles;
    /** Reader threads for list pages; undefined when API_READ_THREADS is 0 (read on the loop). */
    readPool: ReadPool | undefined;
  }
}

export default fp(
  async (app, options: AppOptions) => {
    const { config } = options;
    // Node raised the soft descriptor limit to the hard one at start: size the cache from it.
    const bound = processOpenFilesBound(config.maxOpenCompanies, API_DESCRIPTOR_RESERVE);
    if (bound.source === 'clamped') {
      app.log.warn(
        { configured: config.maxOpenCompanies, used: bound.max, openFileLimit: bound.limit },
        'API_MAX_OPEN_COMPANIES needs more file descriptors than the limit allows (3 per file): cut to fit; raise the limit (ulimit -n, LimitNOFILE) to keep more files open',
      );
    }
    // Each reader thread keeps handles of its own: the descriptor bound is shared with them.
    const threads = config.readThreads;
    const maxOpenCompanies = Math.max(1, Math.floor(bound.max / (threads + 1)));
    const files = new ProjectionFiles(config.dataDir, {
      maxOpenCompanies,
      maxStatementsPerFile: config.maxStatementsPerFile,
      reopenCheckMs: config.reopenCheckMs,
      now: options.now,
      onSwap: (from, to) => app.log.info({ from, to }, 'projection files swapped; reopening handles'),
      // Once per change of a company's state, not per request (those are 503s, not logged).
      onCompanyFault: (companyId, fault) => {
        if (fault)
          app.log.warn(
            { companyId, state: fault.state, reason: fault.reason },
            `company ${companyId} is out of service (${fault.state}): its requests get 503 until ingest has rebuilt its file`,
          );
        else app.log.info({ companyId }, `company ${companyId} is back in service`);
      },
    });
    app.decorate('projections', files);
    const readPool =
      threads === 0
        ? undefined
        : new ReadPool({
            threads,
            thread: {
              dataDir: config.dataDir,
              maxOpenCompanies,
              maxStatementsPerFile: config.maxStatementsPerFile,
              reopenCheckMs: config.reopenCheckMs,
            },
            log: (level, fields, message) => app.log[level](fields, message),
          });
    app.decorate('readPool', readPool);
    app.addHook('onClose', async () => {
      await readPool?.close();
      files.close();
    });
  },
  { name: 'pda-projections', fastify: '5.x' },
);
