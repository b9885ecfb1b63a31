-- Company file, schema version 5: the file's generation, for sync tokens (docs/public-data-api-v1.md,
-- "Sync tokens"; projections/README.md, "meta").

-- created_us: when ingest created this file, which names its generation. A file rebuilt from Kafka
-- (a per-company rebuild or a whole new generation of the data directory) is a new file with a new
-- value, and its change times are new: the api answers a sync token issued on another generation
-- with 410 sync_window_expired (a full export) instead of a list that could miss deletions. The
-- writer never hands out a change time below it. 0 = not set yet: ingest sets it, with
-- tombstones_since_us, when it first opens a new file. A file upgraded from version 4 takes its
-- tombstone horizon, the nearest it knows of its start. [µs since 1970-01-01 UTC]
ALTER TABLE meta ADD COLUMN created_us INTEGER NOT NULL DEFAULT 0;
UPDATE meta SET created_us = tombstones_since_us;
