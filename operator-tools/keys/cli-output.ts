// How the key CLI prints. The secret appears only in printIssued, once.
import type { IssuedApiKey } from './issue.ts';
import type { ListedApiKey } from './list.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function printIssued(
  issued: IssuedApiKey,
  json: boolean,
  rotation?: { oldId: string; oldRevokesAt: Date },
): void {
  if (json) {
    const out = {
      ...issued,
      expiresAt: iso(issued.expiresAt),
      ...(rotation ? { replaces: rotation.oldId, oldRevokesAt: rotation.oldRevokesAt.toISOString() } : {}),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  const lines = [
    `id:          ${issued.id}`,
    `identifier:  ${issued.identifier}`,
    `name:        ${issued.name}`,
    `companies:   ${issued.companyIds.join(', ')}`,
    `scopes:      ${issued.scopes.join(', ')}`,
    `expires at:  ${iso(issued.expiresAt) ?? 'never'}`,
  ];
  if (rotation) {
    lines.push(`replaces:    ${rotation.oldId} (keeps working until ${rotation.oldRevokesAt.toISOString()})`);
  }
  lines.push('', 'API key (shown only now; store it in a secret manager):', issued.key);
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function printList(keys: readonly ListedApiKey[], json: boolean): void {
  if (json) {
    const out = keys.map((k) => ({
      ...k,
      expiresAt: iso(k.expiresAt),
      revokesAt: iso(k.revokesAt),
      createdAt: k.createdAt.toISOString(),
    }));
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  if (keys.length === 0) {
    process.stdout.write('no API keys\n');
    return;
  }
  for (const k of keys) {
    const until = k.revokesAt ? ` revokes ${k.revokesAt.toISOString()}` : '';
    const expires = k.expiresAt ? ` expires ${k.expiresAt.toISOString()}` : '';
    process.stdout.write(
      `${k.id}  ${k.identifier}  ${k.status.padEnd(8)} ${JSON.stringify(k.name)}  scopes=${k.scopes.join(',')}  companies=${k.companyIds.join(',')}${expires}${until}\n`,
    );
  }
}
