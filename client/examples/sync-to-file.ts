// A partner's sync program (docs/partners.md), with @pda/client: keeps a copy of every resource of
// the company in a JSON file. The first run exports everything; each later run applies exactly what
// changed since the previous one, from the sync tokens that run handed out: deletions, then records,
// in the order received. No clock is read: the tokens say where to start.
//
//   PDA_BASE_URL=https://api.example.com PDA_API_KEY=svc_pk_… PDA_STATE_FILE=copy.json node sync-to-file.ts
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createClient, type SyncTokens, SyncWindowExpiredError } from '@pda/client';

const RESOURCES = [
  ['sites', { include: 'contacts' }],
  ['services', {}],
  ['equipment', { include: 'category' }],
  ['equipment-categories', {}],
  ['consumables', {}],
] as const;

interface State {
  /** resource → the tokens the last successful run handed out (none before the first run). */
  tokens: Record<string, SyncTokens>;
  /** resource → id → the record as the api presents it. */
  records: Record<string, Record<string, unknown>>;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const stateFile = env('PDA_STATE_FILE');
const state: State = existsSync(stateFile)
  ? JSON.parse(readFileSync(stateFile, 'utf8'))
  : { tokens: {}, records: {} };
// 429, 5xx and network errors are retried (Retry-After honoured); any other error answer throws ApiError.
const client = createClient({ baseUrl: env('PDA_BASE_URL'), apiKey: env('PDA_API_KEY') });

// Key rotation: once a replacement key is issued, this one works until `revokes_at`.
const { api_key: key } = (await client.me()).data;
if (key.revokes_at !== null)
  console.warn(`${key.identifier} stops working at ${key.revokes_at}: switch keys`);

/** One resource: from its tokens (or a full export without them) into its copy; the changes applied. */
async function syncResource(resource: (typeof RESOURCES)[number][0], query: object): Promise<number> {
  const from = state.tokens[resource] ?? null;
  const copy: Record<string, unknown> = from === null ? {} : { ...state.records[resource] };
  let changes = 0;
  for await (const item of client.syncFrom(resource, from, { query })) {
    if (item.kind === 'checkpoint') {
      // Everything before it is applied: the copy and the next run's tokens are kept together.
      state.records[resource] = copy;
      state.tokens[resource] = item.next;
    } else if (item.kind === 'record')
      copy[item.record.id] = item.record; // upsert by id
    else delete copy[item.deletion.id]; // an id never received: nothing to do
    if (from !== null && item.kind !== 'checkpoint') changes += 1;
  }
  return changes;
}

let changes = 0;
for (const [resource, query] of RESOURCES) {
  try {
    changes += await syncResource(resource, query);
  } catch (error) {
    if (!(error instanceof SyncWindowExpiredError)) throw error;
    // The company's data was rebuilt, or the tokens are older than the deletions kept: start over.
    console.warn(`${resource}: sync window expired: exporting it again`);
    delete state.tokens[resource];
    await syncResource(resource, query);
  }
}

writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
renameSync(`${stateFile}.tmp`, stateFile);
const held = RESOURCES.map(
  ([resource]) => `${Object.keys(state.records[resource] ?? {}).length} ${resource}`,
);
console.log(`${changes} changes applied; the copy holds ${held.join(', ')}`);
