// @pda/operator-tools/pg: the PostgreSQL connection of the CLIs (keys, reconcile; seed in dev-world) (URL, environment, the stack's env file, TLS)
// and the environment-only config for tests and scripts.

export type { ConnectionFlags, ResolvedConnection } from './connection.ts';
export { CONNECTION_OPTIONS, CONNECTION_USAGE, connectClient, resolveConnection } from './connection.ts';
export type { DatabaseUrl } from './database-url.ts';
export { parseDatabaseUrl } from './database-url.ts';
export { pgConfigFromEnv } from './pg-config.ts';
export type { TlsSettings } from './tls.ts';
export { tlsOptions } from './tls.ts';
export { withTransaction } from './transaction.ts';
