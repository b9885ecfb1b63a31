import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { createFixture, type Fixture } from './fixture.ts';
import { testApp } from './test-app.ts';

/** The shared projection files and an app over them, for the tests of one file. */
export interface FixtureApp {
  readonly f: Fixture;
  readonly app: FastifyInstance;
}

/**
 * Registers the file's lifecycle: the fixture (createFixture) and an app over it (testApp) are
 * made before the file's first test; after its last the app is closed and the files removed. Read
 * `f` and `app` inside tests and hooks: they exist once the file's beforeAll has run.
 */
export function fixtureAppPerFile(): FixtureApp {
  let f: Fixture | undefined;
  let app: FastifyInstance | undefined;
  beforeAll(async () => {
    f = createFixture();
    app = await testApp(f.dataDir);
  });
  afterAll(async () => {
    await app?.close();
    f?.cleanup();
  });
  return {
    get f() {
      if (f === undefined) throw new Error('the fixture is made in beforeAll: read it inside a test or hook');
      return f;
    },
    get app() {
      if (app === undefined) throw new Error('the app is made in beforeAll: read it inside a test or hook');
      return app;
    },
  };
}
