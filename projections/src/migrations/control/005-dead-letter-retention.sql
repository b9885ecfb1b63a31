-- Control file, schema version 5: dead letters say where a refused message is and why, never what
-- it held, and are pruned (projections/README.md, "control.sqlite"; ingest/README.md, "Dead
-- letters"). The table is made again without message_value: the letters recorded before keep
-- everything else, with their key and reason cut to 1 KiB; their values are gone.

ALTER TABLE dead_letters RENAME TO dead_letters_before_5;

-- Messages ingest could not decode or apply (ingest/README.md#dead-letters), recorded in the same
-- transaction as the batch they came with, so a replayed batch neither loses nor doubles them
-- (dedupe_key is unique). Only where the message is and why it was refused are kept, not its value
-- (a whole row, with names, emails and phones): the message stays in Kafka at topic, partition and
-- offset, where a replay reads it again. Ingest deletes the oldest beyond
-- INGEST_DEAD_LETTER_MAX_ROWS and those older than INGEST_DEAD_LETTER_RETENTION_S.
CREATE TABLE dead_letters (
  seq             INTEGER PRIMARY KEY,   -- arrival order
  dedupe_key      TEXT NOT NULL UNIQUE,  -- 'kafka:<topic>/<partition>/<offset>' or 'change:<table>/<key>/<lsn>'
  stage           TEXT NOT NULL,         -- 'decode' (ingest) | 'apply' (projections rejected the change)
  topic           TEXT,                  -- Kafka topic of the message (NULL for an apply refusal without one)
  partition       INTEGER,               -- its Kafka partition
  offset          TEXT,                  -- Kafka offsets are int64: kept as decimal text
  table_name      TEXT,                  -- the source table, when known
  message_key     TEXT,                  -- the row's primary key: the message's key as received (decode), or the decoded key as JSON (apply); cut to 1 KiB
  op              TEXT,                  -- the refused change: 'c' | 'u' | 'r' (insert, update, snapshot read), 'd' (delete), 't' (truncate); NULL for a message that could not be decoded
  reason          TEXT NOT NULL,         -- why it was refused, one line, cut to 1 KiB; it may quote the offending value of one column (at most 64 characters), never a row
  recorded_at_ms  INTEGER NOT NULL       -- when ingest recorded it [ms since 1970-01-01 UTC]
) STRICT;
CREATE INDEX dead_letters_recorded ON dead_letters (recorded_at_ms);

INSERT INTO dead_letters (seq, dedupe_key, stage, topic, partition, offset, table_name, message_key, op,
                          reason, recorded_at_ms)
  SELECT seq, dedupe_key, stage, topic, partition, offset, table_name, substr(message_key, 1, 1024), NULL,
         substr(reason, 1, 1024), recorded_at_ms
  FROM dead_letters_before_5;
-- Zeros over the freed pages, so the old values do not stay readable in the file's free space.
PRAGMA secure_delete = ON;
DROP TABLE dead_letters_before_5;
PRAGMA secure_delete = OFF;
