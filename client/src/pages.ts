import type { Client } from './client.ts';
import type { Page } from './contract.ts';
import type { CallOptions } from './transport.ts';

/** The first page, then each page `links.next` leads to, until it is null. */
export async function* walk<P extends Page>(
  client: Pick<Client, 'next'>,
  first: P,
  options: CallOptions = {},
): AsyncGenerator<P> {
  let page: P | null = first;
  while (page !== null) {
    yield page;
    page = await client.next(page, options);
  }
}
