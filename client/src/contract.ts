import type { components, paths } from '@pda/api/contract-types';

/**
 * The client's vocabulary, derived from the contract's generated types (`@pda/api/contract-types`,
 * from api/openapi.yaml, the same file the api's handlers are typed from) and never written by hand:
 * a new resource, parameter or member in the contract reaches the client through
 * `pnpm --filter @pda/api generate`.
 */

/** An exported resource type: the collection name of its endpoint (`sites`, `equipment-categories`, …). */
export type Resource = components['schemas']['ResourceType'];

type Get<P extends keyof paths> = paths[P]['get'];
type QueryOf<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type BodyOf<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

type CollectionPath<R extends Resource> = Extract<keyof paths, `/v1/${R}`>;
// `/v1/equipment/{equipmentId}` but not `/v1/equipment-categories/{categoryId}`.
type ItemPath<R extends Resource> = Extract<keyof paths, `/v1/${R}/{${string}}`>;

// Per resource, as interfaces: their members are resolved once, so `ListPages[R]` of a generic R is
// known to be one of the pages (a mapped type would keep the conditional types unresolved).
interface ListQueries extends Mapped<'list-query'> {}
interface ItemQueries extends Mapped<'item-query'> {}
interface ListPages extends Mapped<'list-page'> {}
interface ItemDocuments extends Mapped<'item-document'> {}
type Mapped<K extends 'list-query' | 'item-query' | 'list-page' | 'item-document'> = {
  [R in Resource]: K extends 'list-query'
    ? QueryOf<Get<CollectionPath<R>>>
    : K extends 'item-query'
      ? QueryOf<Get<ItemPath<R>>>
      : K extends 'list-page'
        ? BodyOf<Get<CollectionPath<R>>>
        : BodyOf<Get<ItemPath<R>>>;
};

/** Query parameters of a collection (`limit`, `sort`, `include`, `fields[…]`, `filter[updated_since]`, `cursor`). */
export type ListQuery<R extends Resource> = ListQueries[R];
/** Query parameters of an item (`include`, `fields[…]` where the resource has them). */
export type ItemQuery<R extends Resource> = ItemQueries[R];
/** One page of a collection: `{ data, meta, links }`. */
export type ListPage<R extends Resource> = ListPages[R];
/** One record: `{ data }`. */
export type ItemDocument<R extends Resource> = ItemDocuments[R];
/** A record of a resource as the api presents it (only `id` is guaranteed under `fields[…]`). */
export type ResourceRecord<R extends Resource> = ListPages[R]['data'][number];

export type DeletionsQuery = QueryOf<Get<'/v1/deletions'>>;
export type DeletionsPage = BodyOf<Get<'/v1/deletions'>>;
export type Deletion = components['schemas']['Deletion'];

export type MeDocument = BodyOf<Get<'/v1/me'>>;
export type Problem = components['schemas']['Problem'];
export type ProblemCode = Problem['code'];

/** `Omit` on each member of a union (`Omit` itself keeps only the members common to all of them). */
export type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Any page of a collection: what `links.next` leads to is a page of the same kind. */
export type Page = ListPage<Resource> | DeletionsPage;
