import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';
import { ProjectionFiles } from '../projections/projection-files.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Read-only projection handles (control + LRU of company files). */
    projections: ProjectionFiles;
  }
}

export default fp(
  async (app, options: AppOptions) => {
    const { config } = options;
    const files = new ProjectionFiles(config.dataDir, {
      maxOpenCompanies: config.maxOpenCompanies,
      reopenCheckMs: config.reopenCheckMs,
      now: options.now,
      onSwap: (from, to) => app.log.info({ from, to }, 'projection files swapped; reopening handles'),
    });
    app.decorate('projections', files);
    app.addHook('onClose', async () => files.close());
  },
  { name: 'pda-projections', fastify: '5.x' },
);
