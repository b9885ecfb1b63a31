import type { Client } from './client.ts';
import type { ListQuery, OmitEach, Resource, ResourceRecord } from './contract.ts';
import { walk } from './pages.ts';

export interface ExportOptions<R extends Resource> {
  /** `include`, `fields[…]`, `sort`, `limit` (200 unless given: fewer requests of the key's budget). */
  readonly query?: OmitEach<ListQuery<R>, 'cursor'>;
  readonly signal?: AbortSignal;
}

/** A full export: every record of `resource`, page after page along `links.next`. */
export async function* exportAll<R extends Resource>(
  client: Pick<Client, 'list' | 'next'>,
  resource: R,
  options: ExportOptions<R> = {},
): AsyncGenerator<ResourceRecord<R>> {
  const call = options.signal ? { signal: options.signal } : {};
  // A spread of a generic query is not provably the same generic type: the cast only restores it.
  const query = { limit: 200, ...options.query } as ListQuery<R>;
  for await (const page of walk(client, await client.list(resource, query, call), call)) {
    yield* page.data;
  }
}
