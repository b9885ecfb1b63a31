// The soak's reading of the deployables' /metrics (bench/pipeline/parts/soak-metrics.ts).
import { describe, expect, test } from 'vitest';
import { metricSum, parsePrometheus } from '../pipeline/parts/soak-metrics.ts';

const TEXT = `# HELP pda_ingest_consumer_lag Lag
# TYPE pda_ingest_consumer_lag gauge
pda_ingest_consumer_lag{topic="pda.public.sites",partition="0"} 12
pda_ingest_consumer_lag{topic="pda.public.services",partition="0"} 3

pda_ingest_open_company_files 7
pda_api_requests_total{operation="listSites",status="200"} 40
pda_api_requests_total{operation="listSites",status="503"} 2
pda_api_requests_total{operation="unmatched",status="500"} 1
pda_api_label_escapes{note="a \\"quoted\\" value, with } and ,"} 1.5e3
pda_api_nodejs_heap_size_used_bytes 123456789 1700000000000
`;

describe('parsePrometheus', () => {
  const samples = parsePrometheus(TEXT);

  test('every sample line with its labels; comments and blank lines skipped', () => {
    expect(samples).toHaveLength(8);
    expect(samples[0]).toEqual({
      name: 'pda_ingest_consumer_lag',
      labels: { topic: 'pda.public.sites', partition: '0' },
      value: 12,
    });
    expect(samples.find((s) => s.name === 'pda_api_label_escapes')).toEqual({
      name: 'pda_api_label_escapes',
      labels: { note: 'a "quoted" value, with } and ,' },
      value: 1500,
    });
  });

  test('a trailing timestamp is not the value', () => {
    expect(metricSum(samples, 'pda_api_nodejs_heap_size_used_bytes')).toBe(123456789);
  });
});

describe('metricSum', () => {
  const samples = parsePrometheus(TEXT);

  test('summed over its series, or those whose labels pass', () => {
    expect(metricSum(samples, 'pda_ingest_consumer_lag')).toBe(15);
    expect(metricSum(samples, 'pda_api_requests_total', (l) => Number(l.status) >= 500)).toBe(3);
    expect(metricSum(samples, 'pda_ingest_open_company_files')).toBe(7);
  });

  test('null when absent (not 0: a gauge the deployable does not have)', () => {
    expect(metricSum(samples, 'pda_api_open_streams')).toBeNull();
    expect(metricSum(samples, 'pda_api_requests_total', (l) => l.status === '418')).toBeNull();
  });
});
