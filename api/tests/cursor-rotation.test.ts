import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, TEST_CURSOR_SECRET, testApp } from './support/test-app.ts';

// Rotating API_CURSOR_SECRET (docs/operations.md): while API_CURSOR_SECRET_PREVIOUS holds the old
// secret, cursors signed with it keep working; new links are signed with the new one only.
const NEW_SECRET = 'rotated-cursor-secret-abcdef0123456789';

let f: Fixture;
const apps: FastifyInstance[] = [];
beforeAll(() => {
  f = createFixture();
});
afterAll(async () => {
  for (const app of apps) await app.close();
  f.cleanup();
});

async function app(env: Record<string, string>) {
  const instance = await testApp(f.dataDir, { env });
  apps.push(instance);
  return instance;
}

async function nextLink(instance: FastifyInstance, url: string): Promise<string> {
  const response = await instance.inject({ url, headers: bearer(f.keys.a) });
  expect(response.statusCode).toBe(200);
  const next = (response.json() as { links: { next: string | null } }).links.next;
  if (!next) throw new Error('the fixture needs more than one page of sites');
  const parsed = new URL(next);
  return parsed.pathname + parsed.search;
}

describe('cursor secret rotation', () => {
  test('a cursor from the old secret pages on while it is the previous one, and not after', async () => {
    const before = await app({});
    const oldCursorLink = await nextLink(before, '/v1/sites?limit=1');

    const rotating = await app({
      API_CURSOR_SECRET: NEW_SECRET,
      API_CURSOR_SECRET_PREVIOUS: TEST_CURSOR_SECRET,
    });
    const continued = await rotating.inject({ url: oldCursorLink, headers: bearer(f.keys.a) });
    expect(continued.statusCode).toBe(200);
    const newCursorLink = await nextLink(rotating, oldCursorLink);

    const after = await app({ API_CURSOR_SECRET: NEW_SECRET });
    expect((await after.inject({ url: newCursorLink, headers: bearer(f.keys.a) })).statusCode).toBe(200);
    const stale = await after.inject({ url: oldCursorLink, headers: bearer(f.keys.a) });
    expect(stale.statusCode).toBe(400);
    expect((stale.json() as { code: string }).code).toBe('invalid_cursor');
    // The old secret alone does not accept what the rotation signed: new links use the new secret.
    const oldOnly = await app({});
    expect((await oldOnly.inject({ url: newCursorLink, headers: bearer(f.keys.a) })).statusCode).toBe(400);
  });

  test('a previous secret shorter than 32 characters is refused like the current one', async () => {
    await expect(app({ API_CURSOR_SECRET_PREVIOUS: 'short' })).rejects.toThrow(/API_CURSOR_SECRET_PREVIOUS/);
  });
});
