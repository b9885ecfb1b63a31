import type { Client } from './client.ts';
import type { Deletion, ListQuery, OmitEach, Resource, ResourceRecord } from './contract.ts';
import { exportAll } from './export-all.ts';
import { walk } from './pages.ts';

export interface SyncOptions<R extends Resource> {
  /** `include`, `fields[…]`, `sort`, `limit` of the records (200 unless given). */
  readonly query?: OmitEach<ListQuery<R>, 'cursor' | 'filter[updated_since]'>;
  readonly signal?: AbortSignal;
}

/** A change of an incremental run: a record to upsert by `id`, or a deletion to remove by `id`. */
export type SyncItem<R extends Resource> =
  | { readonly kind: 'record'; readonly record: ResourceRecord<R> }
  | { readonly kind: 'deletion'; readonly deletion: Deletion };

/**
 * One incremental run (docs/partners.md): `GET /v1/deletions?filter[deleted_since]=since&filter[type]=
 * resource`, then the records with `filter[updated_since]=since`, each followed along `links.next`.
 * Deletions come first so that a `410 sync_window_expired` (SyncWindowExpiredError: export in full)
 * is thrown before anything was yielded. Applied in the order given, the local copy is right: a
 * deletion listed is a record deleted when its page was read (a record that comes back loses its
 * deletion), a record listed existed when its page was read, and whatever changes after a page
 * was read comes again in the next run, which starts from this run's start time.
 */
export async function* syncSince<R extends Resource>(
  client: Pick<Client, 'list' | 'next' | 'deletions'>,
  resource: R,
  since: Date | string,
  options: SyncOptions<R> = {},
): AsyncGenerator<SyncItem<R>> {
  const time = typeof since === 'string' ? since : since.toISOString();
  const call = options.signal ? { signal: options.signal } : {};
  const first = await client.deletions(
    { 'filter[deleted_since]': time, 'filter[type]': resource, limit: 200 },
    call,
  );
  for await (const page of walk(client, first, call)) {
    for (const deletion of page.data) yield { kind: 'deletion', deletion };
  }
  // As in exportAll: the cast restores the generic query type a spread loses.
  const query = { ...options.query, 'filter[updated_since]': time } as OmitEach<ListQuery<R>, 'cursor'>;
  for await (const record of exportAll(client, resource, { ...options, query })) {
    yield { kind: 'record', record };
  }
}
