import { expect, test } from 'vitest';
import { LOG_SERIALIZERS, redactText } from '../src/logging/log-redaction.ts';

// Error messages and stacks are logged through the same redaction as URLs (logging/log-redaction.ts):
// Fastify quotes the offending URL component in some of its errors.

const KEY = 'svc_pk_0123456789abcdef0123456789abcdef';

test('a URL quoted in free text is redacted, the words around it kept', () => {
  expect(redactText(`'/v1/sites?api_key=${KEY}' is not a valid url component`)).toBe(
    "'/v1/sites?api_key=[REDACTED] is not a valid url component",
  );
  expect(redactText(`bad key ${KEY}\n    at x (/work/a.ts:1:2)`)).toBe(
    'bad key [REDACTED]\n    at x (/work/a.ts:1:2)',
  );
  expect(redactText('nothing to hide here')).toBe('nothing to hide here');
});

test('the err serializer redacts message and stack, keeping type and code', () => {
  const error = Object.assign(new URIError(`'/v1/x?token=${KEY}' is not a valid url component`), {
    code: 'FST_ERR_BAD_URL',
  });
  const serialized = LOG_SERIALIZERS.err(error);
  expect(JSON.stringify(serialized)).not.toContain('svc_pk_');
  expect(serialized).toMatchObject({ type: 'URIError', code: 'FST_ERR_BAD_URL' });
  expect(serialized.message).toBe("'/v1/x?token=[REDACTED] is not a valid url component");
});
