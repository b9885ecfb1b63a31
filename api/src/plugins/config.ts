import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';
import type { Config } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /** Wall clock in ms; every time decision of the api goes through it. */
    clock: () => number;
  }
}

export default fp(
  async (app, options: AppOptions) => {
    app.decorate('config', options.config);
    app.decorate('clock', options.now);
  },
  { name: 'pda-config', fastify: '5.x' },
);
