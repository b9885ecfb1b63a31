-- Company file, schema version 2 (projections/README.md documents every table).

-- TRUNCATE floors: source position of the last TRUNCATE of a table applied to this file. Upserts
-- and deletes at or below it are skipped, so a replayed older insert cannot bring a row back
-- (a TRUNCATE also leaves a tombstone per row since schema 4, for the deletions feed).
CREATE TABLE truncations (
  table_name  TEXT PRIMARY KEY,   -- the truncated source table
  _src_lsn    INTEGER NOT NULL,   -- source position of its last TRUNCATE
  _changed_us INTEGER NOT NULL    -- projection change time of that TRUNCATE [µs since 1970-01-01 UTC]
) STRICT;
