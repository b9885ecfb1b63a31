/**
 * The plugins declare what they add to Fastify's types (`declare module 'fastify'`) in their own
 * files, which @fastify/autoload loads at run time — invisible to the type checker of a package
 * that only imports the app (test/, bench/). Importing their types here puts every augmentation in
 * any program that includes app.ts. Type-only: nothing is loaded twice at run time.
 */
export type { default as AuthPlugin } from './plugins/auth.ts';
export type { default as CompressPlugin } from './plugins/compress.ts';
export type { default as ConfigPlugin } from './plugins/config.ts';
export type { default as ContractPlugin } from './plugins/contract.ts';
export type { default as FairSharesPlugin } from './plugins/fair-shares.ts';
export type { default as ForwardPlugin } from './plugins/forward.ts';
export type { default as MetricsPlugin } from './plugins/metrics.ts';
export type { default as ProjectionsPlugin } from './plugins/projections.ts';
export type { default as RateLimitPlugin } from './plugins/rate-limit.ts';
