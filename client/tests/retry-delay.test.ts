import { expect, test } from 'vitest';
import { RETRY_DEFAULTS, retryDelayMs } from '../src/retry.ts';

const NOW = Date.UTC(2026, 0, 31, 12, 0, 0);
const options = { ...RETRY_DEFAULTS, baseDelayMs: 100, maxDelayMs: 1_000 };

test.each([
  {
    name: 'Retry-After in seconds, plus jitter below baseDelayMs',
    retryAfter: '3',
    random: 0.5,
    expected: 3_050,
  },
  {
    name: 'Retry-After as an HTTP date',
    retryAfter: new Date(NOW + 2_000).toUTCString(),
    random: 0,
    expected: 2_000,
  },
  {
    name: 'an HTTP date in the past: at once',
    retryAfter: new Date(NOW - 5_000).toUTCString(),
    random: 0,
    expected: 0,
  },
  { name: 'unreadable Retry-After: backoff', retryAfter: 'soon', random: 0, expected: 50 },
])('$name', ({ retryAfter, random, expected }) => {
  expect(retryDelayMs(1, options, retryAfter, NOW, () => random)).toBe(expected);
});

test('backoff doubles per attempt, half fixed and half random, up to maxDelayMs', () => {
  const low = (attempt: number) => retryDelayMs(attempt, options, null, NOW, () => 0);
  const high = (attempt: number) => retryDelayMs(attempt, options, null, NOW, () => 1);
  expect([1, 2, 3, 4, 5, 6].map(low)).toEqual([50, 100, 200, 400, 500, 500]);
  expect([1, 2, 3, 4, 5, 6].map(high)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
});
