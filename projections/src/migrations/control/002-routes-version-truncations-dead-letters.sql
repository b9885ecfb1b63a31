-- Control file, schema version 2 (projections/README.md documents every table).

-- The source position at which a row entered the company its route names. A change older than or
-- equal to it cannot move the row, so duplicates and replays never send a route back to a company
-- the row has left.
ALTER TABLE routes ADD COLUMN _src_lsn INTEGER NOT NULL DEFAULT 0;

-- TRUNCATE floors: source position of the last TRUNCATE of a table (control tables, and the routes
-- of a tenant table). Changes at or below it are skipped: a replayed older insert cannot come back.
CREATE TABLE truncations (
  table_name  TEXT PRIMARY KEY,   -- the truncated source table
  _src_lsn    INTEGER NOT NULL    -- source position of its last TRUNCATE
) STRICT;

-- Messages ingest could not decode or apply (ingest/README.md#dead-letters). They are recorded in the same
-- transaction as the batch they came with, so a replayed batch neither loses nor doubles them
-- (dedupe_key is unique). The key and value are stored as received for diagnosis.
CREATE TABLE dead_letters (
  seq             INTEGER PRIMARY KEY,   -- arrival order
  dedupe_key      TEXT NOT NULL UNIQUE,  -- 'kafka:<topic>/<partition>/<offset>' or 'change:<table>/<key>/<lsn>'
  stage           TEXT NOT NULL,         -- 'decode' (ingest) | 'apply' (projections rejected the change)
  topic           TEXT,                  -- Kafka topic of the message (NULL for an apply refusal without one)
  partition       INTEGER,               -- its Kafka partition
  offset          TEXT,                  -- Kafka offsets are int64: kept as decimal text
  table_name      TEXT,                  -- the source table, when known
  message_key     TEXT,                  -- the message's key as received
  message_value   TEXT,                  -- the message's value as received, truncated to 64 KiB
  reason          TEXT NOT NULL,         -- why it was refused, one line
  recorded_at_ms  INTEGER NOT NULL       -- when ingest recorded it [ms since 1970-01-01 UTC]
) STRICT;
