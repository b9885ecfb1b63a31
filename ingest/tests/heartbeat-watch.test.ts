import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { KafkaAdmin } from '../src/kafka/client.ts';
import { CONFIRM_DELAY_MS, createHeartbeatWatch } from '../src/kafka/heartbeat-watch.ts';
import { InFlightChunks } from '../src/kafka/in-flight.ts';
import { LagMonitor } from '../src/kafka/lag-monitor.ts';

// A heartbeat's time is reported once the data partitions are applied up to the watermarks read
// just after it arrived (kafka/heartbeat-watch.ts): under load too, when the lag is never zero.

const TOPIC = 'pda.public.sites';
const HEARTBEATS = '__debezium-heartbeat.pda';

function setup() {
  const state = { high: 10 };
  const admin = {
    topicOffsets: async () => [{ partition: 0, low: '0', high: String(state.high) }],
    groupOffsets: async () => [],
  } as unknown as KafkaAdmin;
  const lag = new LagMonitor(admin, 'group', [TOPIC]);
  const reported: number[] = [];
  const watch = createHeartbeatWatch(
    {
      heartbeatTopic: HEARTBEATS,
      onSourceCurrent: async (tsMs) => {
        reported.push(tsMs);
      },
      logger: pino({ level: 'silent' }),
    },
    lag,
    new InFlightChunks(),
  );
  const heartbeat = (tsMs: number) =>
    watch.seen([{ topic: HEARTBEATS, partition: 0, offset: '0', key: null, value: `{"ts_ms":${tsMs}}` }]);
  const applied = (last: number) => {
    lag.applied(TOPIC, 0, String(last), String(state.high));
    watch.applied();
  };
  const marksRead = () => new Promise((resolve) => setTimeout(resolve, CONFIRM_DELAY_MS + 50));
  return { state, reported, heartbeat, applied, marksRead };
}

describe('heartbeat confirmation', () => {
  it('waits for the watermarks read after the heartbeat, then reports it once', async () => {
    const { reported, heartbeat, applied, marksRead } = setup();
    applied(4);
    heartbeat(1_000);
    await marksRead();
    expect(reported).toEqual([]); // offsets 5..9 were in Kafka before the heartbeat was confirmed
    applied(8);
    expect(reported).toEqual([]);
    applied(9);
    expect(reported).toEqual([1_000]);
    applied(9);
    expect(reported).toEqual([1_000]);
  });

  it('under continuous load: reported although new records keep the lag above zero', async () => {
    const { state, reported, heartbeat, applied, marksRead } = setup();
    heartbeat(2_000);
    await marksRead(); // marks: 10
    state.high = 20; // more changes arrived after the heartbeat
    applied(9);
    expect(reported).toEqual([2_000]);
    heartbeat(3_000);
    await marksRead(); // marks: 20
    state.high = 30;
    applied(15);
    expect(reported).toEqual([2_000]);
    applied(19);
    expect(reported).toEqual([2_000, 3_000]);
  });

  it('an older or repeated heartbeat is not reported again', async () => {
    const { reported, heartbeat, applied, marksRead } = setup();
    applied(9);
    heartbeat(5_000);
    await marksRead();
    expect(reported).toEqual([5_000]);
    heartbeat(4_000);
    heartbeat(5_000);
    await marksRead();
    applied(9);
    expect(reported).toEqual([5_000]);
  });
});
