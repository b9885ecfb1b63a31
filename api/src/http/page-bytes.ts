/**
 * A page's response bytes, written from its parts: the envelope's head, the records' JSON texts
 * (comma-separated) and its tail, each encoded once into one buffer of the exact size.
 *
 * Why not one string: joining a page's texts made a flat string as large as the page (200-400 KB
 * for 200 rows), which V8 allocates in its large-object space, and Fastify's length and the
 * socket's write flattened and encoded the envelope around it again; all of it garbage once
 * written. In the api's CPU profile under the noisy-neighbour mix the string writes were 12 % of
 * its CPU and garbage collection paused the loop up to 38 ms
 * (bench/results/noisy-neighbour-2026-12-02.md). A Buffer's bytes live outside the V8 heap.
 */
export function pageBytes(head: string, items: readonly string[], tail: string): Buffer {
  return joinedBytes(head, items, ',', tail);
}

/**
 * `head`, the items with `separator` between them, then `tail`, in one buffer of the exact size,
 * each text encoded once: a page's envelope (comma-separated) and a stream's chunk of lines
 * (changes/stream-framing.ts).
 */
export function joinedBytes(head: string, items: readonly string[], separator: string, tail: string): Buffer {
  const separatorBytes = Buffer.byteLength(separator);
  let size =
    Buffer.byteLength(head) + Buffer.byteLength(tail) + separatorBytes * Math.max(0, items.length - 1);
  for (const item of items) size += Buffer.byteLength(item);
  // Every byte is written below: the sizes are what write() produces (UTF-8, lone surrogates as U+FFFD).
  const bytes = Buffer.allocUnsafe(size);
  let at = bytes.write(head, 0);
  for (let index = 0; index < items.length; index++) {
    if (index > 0) at += bytes.write(separator, at);
    at += bytes.write(items[index] as string, at);
  }
  at += bytes.write(tail, at);
  if (at !== size) throw new Error(`page bytes: wrote ${at} of ${size}`);
  return bytes;
}

/**
 * A page's response from its read: the items' texts (read on the event loop) or the bytes a reader
 * thread joined them into (read-pool/), between the envelope's head and tail.
 */
export function pageResponse(
  head: string,
  read: { readonly items: readonly string[] } | { readonly data: Uint8Array },
  tail: string,
): Buffer {
  if ('items' in read) return pageBytes(head, read.items, tail);
  return Buffer.concat([Buffer.from(head), read.data, Buffer.from(tail)]);
}
