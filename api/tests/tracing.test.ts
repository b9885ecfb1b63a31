import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { startTracing, type Tracing } from '@pda/tracing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// The api's request spans (observability/tracing.ts, request-trace.ts): one per request, named by
// its route, with the company, the plan and the rows read; a feed page links to the traced ingest
// batches that applied it; no key, cursor or sync token in any span.

const BATCH = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8) };
let f: Fixture;
let app: FastifyInstance;
let tracing: Tracing;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  f = createFixture();
  // A batch traced by ingest: its ids go into the company file with its changes.
  const store = ProjectionStore.open({ dataDir: f.dataDir });
  store.applyBatch(
    [1, 2, 3].map((n) =>
      makeUpsert(
        'sites',
        sampleRow('sites', { id: `5175e000-0000-4000-8000-00000000000${n}`, company_id: COMPANY.A }),
        900_000 + n,
      ),
    ),
    { trace: BATCH },
  );
  store.close();
  tracing = startTracing({ serviceName: 'pda-api', exporter, env: {} });
  app = await testApp(f.dataDir, { tracing });
});
afterAll(async () => {
  await app.close();
  await tracing.shutdown();
  f.cleanup();
});

async function spansOf(url: string, key = f.keys.a): Promise<{ status: number; spans: ReadableSpan[] }> {
  await tracing.provider?.forceFlush(); // an earlier request's span is not counted here
  exporter.reset();
  const response = await app.inject({ url, headers: bearer(key) });
  await tracing.provider?.forceFlush();
  return { status: response.statusCode, spans: exporter.getFinishedSpans() };
}

describe('request spans', () => {
  it('one span per list request: route, company, plan, rows; the URL without its query', async () => {
    const { status, spans } = await spansOf('/v1/sites?limit=2&filter[updated_since]=2000-01-01T00:00:00Z');
    expect(status).toBe(200);
    expect(spans).toHaveLength(1);
    const [span] = spans;
    expect(span?.name).toBe('GET /v1/sites');
    expect(span?.attributes).toMatchObject({
      'http.route': '/v1/sites',
      'url.path': '/v1/sites',
      'pda.company': COMPANY.A,
      'pda.page.plan': expect.stringMatching(/^(walk-since|changed)$/),
      'pda.rows_read': 2,
    });
  });

  it('a change-feed page links to the traced batch that applied its changes', async () => {
    const { status, spans } = await spansOf('/v1/changes?filter[type]=sites&limit=50');
    expect(status).toBe(200);
    const [span] = spans;
    expect(span?.attributes['pda.rows_read']).toBeGreaterThanOrEqual(3);
    expect(span?.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId }))).toEqual([
      BATCH,
    ]);
  });

  it('no key, cursor or sync token in any span, even when the request carries them everywhere', async () => {
    const first = await app.inject({ url: '/v1/sites?limit=1', headers: bearer(f.keys.a) });
    const body = first.json() as { links: { next: string } };
    const next = body.links.next.replace(TEST_BASE_URL, '');
    const cursor = new URL(body.links.next).searchParams.get('cursor') ?? '';
    expect(cursor).not.toBe('');
    const { spans } = await spansOf(`${next}&api_key=${f.keys.a}`);
    const { spans: unauthorized } = await spansOf(
      `/v1/sites?api_key=${f.keys.a}`,
      'svc_pk_not_a_real_key_0000',
    );
    const text = JSON.stringify(
      [...spans, ...unauthorized].map((s) => [s.name, s.attributes, s.events, s.links]),
    );
    expect(spans.length + unauthorized.length).toBe(2);
    expect(text).not.toContain(f.keys.a);
    expect(text).not.toContain('svc_pk_');
    expect(text).not.toContain(cursor);
    expect(text).not.toContain('cursor');
  });

  it("ignores a caller's traceparent: a partner can neither join our trace nor pick its sampling", async () => {
    await tracing.provider?.forceFlush();
    exporter.reset();
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await app.inject({ url: '/v1/sites?limit=1', headers: { ...bearer(f.keys.a), traceparent: parent } });
    await tracing.provider?.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span?.parentSpanContext).toBeUndefined();
  });
});
