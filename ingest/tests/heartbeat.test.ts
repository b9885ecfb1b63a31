import { describe, expect, it } from 'vitest';
import { heartbeatTopic, heartbeatTsMs } from '../src/decode/index.ts';

// Debezium's heartbeat value as JsonConverter writes it with schemas (the stack's connector) and without.
const WITH_SCHEMA =
  '{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat"},"payload":{"ts_ms":1795562503624}}';

describe('Debezium heartbeats', () => {
  it('names the topic after the connector prefix', () => {
    expect(heartbeatTopic('pda')).toBe('__debezium-heartbeat.pda');
  });

  it('reads ts_ms with and without the inline schema, as text or bytes', () => {
    expect(heartbeatTsMs(WITH_SCHEMA)).toBe(1795562503624);
    expect(heartbeatTsMs(Buffer.from(WITH_SCHEMA))).toBe(1795562503624);
    expect(heartbeatTsMs('{"ts_ms":42}')).toBe(42);
  });

  it('answers undefined for anything that is not a heartbeat, never throws', () => {
    for (const value of [
      null,
      '',
      'not json',
      '{"payload":{}}',
      '{"ts_ms":"1795562503624"}',
      '{"ts_ms":-5}',
      '{"ts_ms":1.5}',
      '[1,2]',
      Buffer.from([0xff, 0xfe]),
    ]) {
      expect(heartbeatTsMs(value)).toBeUndefined();
    }
  });
});
