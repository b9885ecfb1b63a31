// The api's test support, imported as `@pda/api/testing` (package.json exports) by the packages that
// test against a real api in-process (the client's tests, the partner guide's examples): projection
// files with a key per auth case, and an app built on them.
export * from './fixture.ts';
export * from './test-app.ts';
