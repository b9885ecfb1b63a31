import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { KafkaClient } from '../src/kafka/client.ts';
import {
  checkTopicStates,
  createMissingTopics,
  DATA_TOPIC_CONFIG,
  IncompleteTopicsError,
  type TopicState,
} from '../src/kafka/data-topics.ts';

const connectorJson = join(import.meta.dirname, '..', '..', 'dev-world', 'stack', 'connector.json');

/** A pino logger whose lines land in `lines` (parsed). */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const state = (topic: string, cleanupPolicy: string, lowWatermark = 0): TopicState => ({
  topic,
  cleanupPolicy,
  lowWatermark,
});

describe('data topic settings', () => {
  it('are the topic.creation.default.* settings Debezium creates its topics with', () => {
    const connector = JSON.parse(readFileSync(connectorJson, 'utf8')) as Record<string, string>;
    const prefix = 'topic.creation.default.';
    const debezium = Object.fromEntries(
      Object.entries(connector)
        .filter(([name]) => name.startsWith(prefix))
        .map(([name, value]) => [name.slice(prefix.length), value])
        // Partitions and replication stay the broker's defaults for both creators.
        .filter(([name]) => name !== 'partitions' && name !== 'replication.factor'),
    );
    expect(debezium).toEqual(DATA_TOPIC_CONFIG);
    expect(DATA_TOPIC_CONFIG['cleanup.policy']).toBe('compact');
  });
});

describe('checkTopicStates', () => {
  it('is silent when every data topic is compacted', () => {
    const { logger, lines } = capturingLogger();
    checkTopicStates(
      [state('p.public.sites', 'compact'), state('p.public.x', 'compact,delete')],
      logger,
      true,
    );
    expect(lines).toEqual([]);
  });

  it('warns once, naming every topic that is not compacted', () => {
    const { logger, lines } = capturingLogger();
    checkTopicStates(
      [
        state('p.public.sites', 'delete'),
        state('p.public.companies', 'compact'),
        state('p.public.x', 'delete', 5),
      ],
      logger,
      false,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      topics: ['p.public.sites (cleanup.policy=delete)', 'p.public.x (cleanup.policy=delete)'],
    });
  });

  it('refuses (rebuild) only a topic that is not compacted and lost the start of its log', () => {
    const { logger, lines } = capturingLogger();
    // Not compacted yet complete: a rebuild is still right today, so only the warning.
    checkTopicStates([state('p.public.sites', 'delete', 0)], logger, true);
    expect(lines).toHaveLength(1);
    expect(() =>
      checkTopicStates(
        [state('p.public.sites', 'delete', 0), state('p.public.equipment', 'delete', 42)],
        logger,
        true,
      ),
    ).toThrow(IncompleteTopicsError);
    expect(() => checkTopicStates([state('p.public.equipment', 'delete', 42)], logger, true)).toThrow(
      /p\.public\.equipment \(cleanup\.policy=delete, low watermark 42\)/,
    );
    // A compacted topic never moves its log start by itself; if it did, its state is still complete.
    expect(() => checkTopicStates([state('p.public.sites', 'compact', 7)], logger, true)).not.toThrow();
  });
});

describe('createMissingTopics', () => {
  /** A broker whose topics exist once created, and whose first wait for new leaders fails. */
  function broker(failures: unknown[]) {
    const topics = new Set(['p.public.companies']);
    const calls: string[][] = [];
    const client = {
      admin: {
        listTopics: async () => [...topics],
        createTopics: async (names: readonly string[]) => {
          calls.push([...names]);
          for (const name of names) topics.add(name);
          const failure = failures.shift();
          if (failure !== undefined) throw failure;
        },
      },
      isRetriable: (error: unknown) => (error as { retriable?: boolean }).retriable === true,
    } as unknown as KafkaClient;
    return { client, calls };
  }
  const unknownTopic = Object.assign(new Error('This server does not host this topic-partition'), {
    retriable: true,
  });

  it('waits out a new topic the broker does not know yet, creating nothing twice', async () => {
    const { client, calls } = broker([unknownTopic]);
    const created = await createMissingTopics(client, [
      'p.public.companies',
      'p.public.sites',
      'p.public.services',
    ]);
    expect(created).toEqual(['p.public.sites', 'p.public.services']);
    // The retry found both created: no second createTopics.
    expect(calls).toEqual([['p.public.sites', 'p.public.services']]);
  });

  it('gives up at once on an error that is not retriable', async () => {
    const refused = Object.assign(new Error('Topic authorization failed'), { retriable: false });
    const { client, calls } = broker([refused]);
    await expect(createMissingTopics(client, ['p.public.sites'])).rejects.toThrow(
      'Topic authorization failed',
    );
    expect(calls).toHaveLength(1);
  });
});
