-- Company file, schema version 7 (projections/README.md documents every table).
--
-- Links kept for traces only: nothing of the data depends on them, and a test that turns a file
-- back into an older version and upgrades it again may drop them (DROP ... IF EXISTS below).
DROP TABLE IF EXISTS apply_traces;

-- Which traced ingest batch wrote which change times, so that the api's span of a change-feed page
-- links to the batch that applied its changes (one trace from the source commit to the partner:
-- docs/operations.md, "Traces"). One row per company transaction of a batch whose trace was
-- sampled; written only while ingest exports traces; the newest 1,000 rows are kept
-- (projections/src/write/files/company-file.ts recordTrace).
CREATE TABLE apply_traces (
  last_changed_us  INTEGER PRIMARY KEY, -- the last change time the transaction wrote [µs since 1970-01-01 UTC]
  first_changed_us INTEGER NOT NULL,    -- the first change time it wrote [µs since 1970-01-01 UTC]
  trace_id         TEXT NOT NULL,       -- the batch span's W3C trace id [32 hex digits]
  span_id          TEXT NOT NULL        -- the batch span's W3C span id [16 hex digits]
) STRICT, WITHOUT ROWID;
