/**
 * The pages that came with an ETag, by URL, the most recently used last (a small LRU): the
 * transport asks a kept page's URL again with `If-None-Match`, and a `304` is answered with it.
 */
export class KeptPages {
  readonly #max: number;
  readonly #pages = new Map<string, { etag: string; text: string }>();

  constructor(max: number) {
    this.#max = max;
  }

  etag(url: string): string | undefined {
    return this.#pages.get(url)?.etag;
  }

  page(url: string): string | undefined {
    const entry = this.#pages.get(url);
    if (entry === undefined) return undefined;
    this.#pages.delete(url);
    this.#pages.set(url, entry);
    return entry.text;
  }

  remember(url: string, etag: string | null, text: string): void {
    this.#pages.delete(url);
    if (etag === null || this.#max === 0) return;
    this.#pages.set(url, { etag, text });
    if (this.#pages.size > this.#max) this.#pages.delete(this.#pages.keys().next().value as string);
  }
}
