import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';
import { type Contract, loadContract } from '../contract/load-contract.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI contract, the source of every route's schema, credential and scopes. */
    contract: Contract;
  }
}

export default fp(
  async (app, options: AppOptions) => {
    app.decorate('contract', loadContract(options.contractFile));
  },
  { name: 'pda-contract', fastify: '5.x' },
);
