import { describe, expect, test } from 'vitest';
import { REDACTED, redactUrl } from '../src/model/redact-url.ts';

// Keys sent the wrong way (query string, path) never reach a log line: src/model/redact-url.ts.

const KEY = 'svc_pk_3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6';

describe('redactUrl', () => {
  test.each([
    // parameter names, in every spelling a client might use
    [`/v1/sites?api_key=${KEY}`, `/v1/sites?api_key=${REDACTED}`],
    ['/v1/sites?api_key=not-a-prefixed-key', `/v1/sites?api_key=${REDACTED}`],
    ['/v1/sites?API_KEY=abc', `/v1/sites?API_KEY=${REDACTED}`],
    ['/v1/sites?Api-Key=abc', `/v1/sites?Api-Key=${REDACTED}`],
    ['/v1/sites?apikey=abc', `/v1/sites?apikey=${REDACTED}`],
    ['/v1/sites?key=abc&limit=2', `/v1/sites?key=${REDACTED}&limit=2`],
    ['/v1/sites?limit=2&token=abc', `/v1/sites?limit=2&token=${REDACTED}`],
    ['/v1/sites?access_token=abc', `/v1/sites?access_token=${REDACTED}`],
    ['/v1/sites?ACCESS-TOKEN=abc', `/v1/sites?ACCESS-TOKEN=${REDACTED}`],
    // encoded names
    ['/v1/sites?api%5Fkey=abc', `/v1/sites?api%5Fkey=${REDACTED}`],
    ['/v1/sites?%61pi_key=abc', `/v1/sites?%61pi_key=${REDACTED}`],
    ['/v1/sites?to%6Ben=abc', `/v1/sites?to%6Ben=${REDACTED}`],
    // a key under any other name, in any case, plain or percent-encoded (once or twice)
    [`/v1/sites?auth=${KEY}`, `/v1/sites?auth=${REDACTED}`],
    [`/v1/sites?x=${KEY.toUpperCase()}`, `/v1/sites?x=${REDACTED}`],
    ['/v1/sites?x=svc%5Fpk%5Fabc', `/v1/sites?x=${REDACTED}`],
    ['/v1/sites?x=svc%5fpk%5fabc', `/v1/sites?x=${REDACTED}`],
    ['/v1/sites?x=svc%255Fpk%255Fabc', `/v1/sites?x=${REDACTED}`],
    ['/v1/sites?x=%73vc_pk_abc%ZZ', `/v1/sites?x=${REDACTED}`],
    [`/v1/sites?x=Bearer+${KEY}`, `/v1/sites?x=${REDACTED}`],
    [`/v1/sites?${KEY}`, `/v1/sites?${REDACTED}`],
    [`/v1/sites?${KEY}=1`, `/v1/sites?${REDACTED}`],
    // a key in the path
    [`/v1/sites/${KEY}`, `/v1/sites/${REDACTED}`],
    [`/v1/sites/${KEY}/contacts?limit=1`, `/v1/sites/${REDACTED}/contacts?limit=1`],
    ['/v1/SVC%5FPK%5Fabc', `/v1/${REDACTED}`],
    // several at once, the rest untouched
    [
      `/v1/sites?limit=2&api_key=${KEY}&sort=-name&token=t`,
      `/v1/sites?limit=2&api_key=${REDACTED}&sort=-name&token=${REDACTED}`,
    ],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  test.each([
    '/v1/sites',
    '/v1/sites?limit=2&sort=-name,id',
    '/v1/sites?fields%5Bsites%5D=name&filter[updated_since]=2026-01-31T12:00:00Z',
    '/v1/sites?keys=1&monkey=2&token_type=x',
    '/v1/sites?%FF=1&sort=%E0%A4%A',
    '/v1/sites/%E0%A4%A',
    '/v1/sites/00000000-0000-4000-8000-000000000001',
    '/',
    '',
    '?',
    '/v1/sites?&&=&',
  ])('%s is left as it is', (url) => {
    expect(redactUrl(url)).toBe(url);
  });
});
