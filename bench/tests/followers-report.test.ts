import { describe, expect, it } from 'vitest';
import { type CaseResult, costTable, latencyTable, renderReport } from '../api/parts/followers-report.ts';

const oneCase: CaseResult = {
  asked: 5000,
  kinds: [
    {
      kind: 'long-poll',
      followers: 2500,
      established: 1004,
      missed: 3,
      latency: { samples: 60240, p50Ms: 140, p99Ms: 1200, maxMs: 2100 },
    },
    {
      kind: 'live-stream',
      followers: 2500,
      established: 1004,
      missed: 0,
      latency: { samples: 0, p50Ms: null, p99Ms: null, maxMs: null },
    },
  ],
  markers: 600,
  writeSeconds: 30,
  api: { peakRssMb: 310, peakHeapUsedMb: 120, peakOpenFds: 2100, peakHeldRequests: 2008, cores: 0.61 },
  otherCores: { ingest: 0.1, bench: 0.35 },
  benchLoopDelayP99Ms: 21.53,
  refusals: { too_many_connections: 4500, held_per_key: 0 },
  clientErrors: { ECONNRESET: 4500 },
  statuses: { '200': 90000 },
};

describe('followers report', () => {
  it('has a latency row per N and kind, thousands separated, a dash where there is no figure', () => {
    const rows = latencyTable([oneCase]).split('\n');
    expect(rows).toHaveLength(4);
    expect(rows[2]).toBe('| 5,000 | long-poll | 2,500 | 1,004 | 60,240 | 3 | 140 | 1,200 | 2,100 |');
    expect(rows[3]).toBe('| 5,000 | live-stream | 2,500 | 1,004 | 0 | 0 | – | – | – |');
  });

  it('lists the other processes’ cores and only the refusals that happened', () => {
    expect(costTable([oneCase]).split('\n')[2]).toBe(
      '| 5,000 | 310 | 120 | 2,100 | 2,008 | 0.61 | ingest 0.10, bench 0.35 | 21.5 | too_many_connections 4,500 |',
    );
  });

  it('renders the whole document with its sections', () => {
    const doc = renderReport({
      date: '2026-12-02',
      command: 'node api/followers.ts --ns 5000',
      machine: { cores: 2 },
      inputs: { ns: [5000] },
      settings: { '5000': { API_MAX_HELD_REQUESTS: '5100' } },
      cases: [oneCase],
    });
    for (const heading of ['## Machine', '## Inputs', '## Commit → follower', '## Answers the followers had'])
      expect(doc).toContain(heading);
    expect(doc).toContain('| 5,000 | 200 90,000 | ECONNRESET 4,500 |');
  });
});
