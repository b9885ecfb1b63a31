// @pda/client: a typed client of the Public Data API v1 (docs/partners.md). Types come from the
// contract (`@pda/api/contract-types`, generated from api/openapi.yaml); nothing here restates them.

export type { components, operations, paths } from '@pda/api/contract-types';
export { type Client, createClient } from './client.ts';
export type {
  Deletion,
  DeletionsPage,
  DeletionsQuery,
  ItemDocument,
  ItemQuery,
  ListPage,
  ListQuery,
  MeDocument,
  Page,
  Problem,
  ProblemCode,
  Resource,
  ResourceRecord,
} from './contract.ts';
export { ApiError, StreamNotOfferedError, SyncWindowExpiredError } from './errors.ts';
export type { ExportOptions } from './export-all.ts';
export type { Change, ChangesPage, ChangesQuery, FollowOptions, FollowPage } from './follow.ts';
export type { RetryEvent, RetryOptions } from './retry.ts';
export type { StreamChunk, StreamLine, StreamOptions } from './stream.ts';
export type { SyncFromOptions, SyncTokens, TokenSyncItem } from './sync-from.ts';
export type { SyncItem, SyncOptions } from './sync-since.ts';
export type { CallOptions, ClientOptions } from './transport.ts';
