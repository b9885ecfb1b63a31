import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { safeAttributes } from '../src/safe-attributes.ts';
import { startTracing } from '../src/start-tracing.ts';

const KEY = 'svc_pk_live_0123456789abcdef0123456789abcdef';

// No key, cursor or sync token leaves in a span, whoever set the attribute.
describe('safeAttributes', () => {
  it('drops secret-named attributes, keeps URL paths only, redacts keys anywhere', () => {
    expect(
      safeAttributes({
        'http.request.header.authorization': `Bearer ${KEY}`,
        'pda.cursor': 'abc',
        'pda.sync_token': 'tok',
        api_key: KEY,
        'url.path': '/v1/sites?page[cursor]=eyJ4&sync=tok',
        'url.query': 'page[cursor]=eyJ4',
        'http.route': '/v1/sites',
        'pda.company': 'c0ffee00-0000-4000-8000-000000000001',
        'pda.note': `sent ${KEY} in the body`,
        'pda.list': ['a', KEY],
        'pda.rows_read': 25,
      }),
    ).toEqual({
      'url.path': '/v1/sites',
      'http.route': '/v1/sites',
      'pda.company': 'c0ffee00-0000-4000-8000-000000000001',
      'pda.note': '[REDACTED]',
      'pda.list': ['a', '[REDACTED]'],
      'pda.rows_read': 25,
    });
  });

  it('redacts a key in a URL path, also percent-encoded', () => {
    expect(safeAttributes({ 'url.path': `/v1/svc%5Fpk%5Fabc/sites?x=1` })).toEqual({
      'url.path': '/v1/[REDACTED]/sites',
    });
  });
});

describe('startTracing with an exporter', () => {
  it('exports spans through the safe exporter: what arrives has no secret in it', async () => {
    const memory = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: 'pda-test', exporter: memory, env: {} });
    expect(tracing.enabled).toBe(true);
    const span = tracing.tracer.startSpan('request', {
      attributes: { 'url.path': `/v1/sites?api_key=${KEY}&page[cursor]=x`, 'pda.sync_token': 't' },
    });
    span.addLink({ context: span.spanContext(), attributes: { note: KEY } });
    span.end();
    await tracing.provider?.forceFlush();
    const [exported] = memory.getFinishedSpans();
    expect(exported?.attributes).toEqual({ 'url.path': '/v1/sites' });
    expect(exported?.links[0]?.attributes).toEqual({ note: '[REDACTED]' });
    expect(JSON.stringify(exported?.attributes)).not.toContain('svc_pk_');
    await tracing.shutdown();
  });
});
