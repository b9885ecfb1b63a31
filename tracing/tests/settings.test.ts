import { AlwaysOffSampler, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { samplerFromSettings } from '../src/sampler.ts';
import { tracingSettings } from '../src/settings.ts';

// Off unless an OTLP endpoint is named; the standard names, refused clearly when wrong.
describe('tracingSettings', () => {
  it('is off by default and names why', () => {
    expect(tracingSettings({}, 'pda-api')).toEqual({
      enabled: false,
      reason: 'no OTLP endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT)',
    });
  });

  it('is on with an endpoint, traces endpoint first, the service name from OTEL_SERVICE_NAME', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'pda-api')).toEqual({
      enabled: true,
      serviceName: 'pda-api',
      endpoint: 'http://collector:4318/v1/traces',
    });
    expect(
      tracingSettings(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/v1/traces',
          OTEL_SERVICE_NAME: 'api-eu-1',
        },
        'pda-api',
      ),
    ).toEqual({ enabled: true, serviceName: 'api-eu-1', endpoint: 'http://b:4318/v1/traces' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }, 'pda-ingest')).toMatchObject({
      enabled: true,
      endpoint: 'http://localhost:4318/v1/traces',
    });
  });

  it('OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none win over an endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, 'x').enabled).toBe(false);
    expect(tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'x').enabled).toBe(false);
  });

  it('refuses an exporter or protocol it cannot serve, saying what it can', () => {
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'x')).toThrow(/only "otlp"/);
    expect(() =>
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'x'),
    ).toThrow(/http\/json/);
  });
});

describe('samplerFromSettings', () => {
  it('defaults to parent-based always-on; takes the ratio for traceidratio', () => {
    expect(samplerFromSettings({})).toBeInstanceOf(ParentBasedSampler);
    expect(samplerFromSettings({ OTEL_TRACES_SAMPLER: 'always_off' })).toBeInstanceOf(AlwaysOffSampler);
    const ratio = samplerFromSettings({
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    });
    expect(ratio).toBeInstanceOf(TraceIdRatioBasedSampler);
    expect(ratio.toString()).toContain('0.01');
  });

  it('refuses an unknown sampler or a ratio out of range', () => {
    expect(() => samplerFromSettings({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/one of always_on/);
    expect(() =>
      samplerFromSettings({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }),
    ).toThrow(/from 0 to 1/);
  });
});
