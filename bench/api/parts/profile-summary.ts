/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and says where the time went: the functions with the
 * most self time and the share of a few named parts of the api's request path (inclusive time,
 * each function counted once per sample). Shares are of all samples, idle and start-up included.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Parts of a list request, by the function that roots them (name, then a piece of its file). */
export const PARTS: readonly (readonly [label: string, functionName: string, file: string])[] = [
  ['SQLite page read (readPage)', 'readPage', 'read/page.ts'],
  ['response serialisation (fast-json-stringify)', 'serialize', 'fastify/lib/reply.js'],
  ['socket write (encode + syscall)', 'Socket._writeGeneric', 'node:net'],
  ['Content-Length (Buffer.byteLength)', 'byteLength', 'node:buffer'],
  ['auth hooks', '', 'plugins/auth.ts'],
  ['cursor signing (HMAC)', 'signCursor', 'collection/cursor.ts'],
  ['HTTP parsing', 'parserOnHeadersComplete', 'node:_http_common'],
  ['garbage collector', '(garbage collector)', ''],
  ['idle', '(idle)', ''],
];

export interface Summary {
  readonly totalMs: number;
  readonly self: readonly { name: string; share: number }[];
  readonly parts: readonly { label: string; share: number }[];
}

export function summarise(file: string, top = 15): Summary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const timeOf = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const self = new Map<string, number>();
  const parts = new Map<string, number>();
  let total = 0;
  for (const [id, time] of timeOf) {
    total += time;
    const node = byId.get(id);
    if (!node) continue;
    const name = describe(node);
    self.set(name, (self.get(name) ?? 0) + time);
    const counted = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame) break;
      for (const [label, functionName, piece] of PARTS) {
        if (counted.has(label) || frame.functionName !== functionName || !frame.url.includes(piece)) continue;
        counted.add(label);
        parts.set(label, (parts.get(label) ?? 0) + time);
      }
    }
  }
  const share = (time: number) => (total > 0 ? time / total : 0);
  return {
    totalMs: total / 1000,
    self: [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => ({ name, share: share(time) })),
    parts: PARTS.map(([label]) => ({ label, share: share(parts.get(label) ?? 0) })),
  };
}

function describe(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url
    .replace(/.*node_modules\/\.pnpm\/([^/]+)\/node_modules\//, '$1 ')
    .replace(/^file:\/\/.*?\/(api|projections)\//, '$1/');
  if (!url) return functionName || '(native, unnamed)';
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}
