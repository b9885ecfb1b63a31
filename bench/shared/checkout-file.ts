/**
 * A bench file of another checkout (`--before-repo`: the code before a change, which builds its
 * own inputs). A checkout from before bench/ was grouped by target keeps its files at bench/'s top,
 * so the path of this layout is tried first, then the flat one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The file:// URL of `grouped` (a path under bench/) in `checkout`, else of bench/<flat>; throws if neither exists. */
export function checkoutBenchFile(checkout: string, grouped: string, flat: string): string {
  for (const path of [join(checkout, 'bench', grouped), join(checkout, 'bench', flat)])
    if (existsSync(path)) return pathToFileURL(path).href;
  throw new Error(`${checkout}: neither bench/${grouped} nor the flat layout's ${flat}`);
}
