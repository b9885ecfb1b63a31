-- Company file, schema version 4: the deletions feed (GET /v1/deletions) and tombstone retention
-- (projections/README.md, "Tombstones and the deletions feed").

-- tombstones_since_us: every delete projected into this file with a change time at or after this
-- value still has its tombstone here (unless a newer create of the same id removed it). Below it,
-- tombstones may be gone: the file did not exist yet (a new company, a rebuilt generation), or
-- ingest pruned them after the retention window (INGEST_TOMBSTONE_RETENTION_S). The api answers a
-- filter[deleted_since] below it with 410 sync_window_expired instead of an incomplete list.
-- 0 = not set yet: ingest sets it to its clock when it first opens a new file. A file upgraded
-- from version 3 vouches only for deletes after the upgrade (a TRUNCATE used to drop tombstones,
-- and a rebuilt file never held the older ones). [µs since 1970-01-01 UTC]
ALTER TABLE meta ADD COLUMN tombstones_since_us INTEGER NOT NULL DEFAULT 0;
UPDATE meta SET tombstones_since_us = last_changed_us + 1;

-- The deletions feed pages tombstones in change-time order; pruning deletes the oldest first.
CREATE INDEX tombstones_by_changed ON tombstones (_changed_us, table_name, id);
