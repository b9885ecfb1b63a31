-- Company file, schema version 7: which traced ingest batch wrote which change times, so that the
-- api's span of a change-feed page can link to the batch that applied its changes (one trace from
-- the source commit to the partner: docs/operations.md, "Traces").
--
-- One row per company transaction of a batch whose trace was sampled: its change times
-- (first_changed_us..last_changed_us, the range the transaction took from the file's counter) and
-- the W3C ids of the batch's span. Written only while ingest exports traces; ingest keeps the
-- newest 1,000 rows (projections/src/write/files/company-file.ts recordTrace). (IF NOT EXISTS: a
-- test turns a file back into an older version and upgrades it again.)

CREATE TABLE IF NOT EXISTS apply_traces (
  last_changed_us  INTEGER PRIMARY KEY,
  first_changed_us INTEGER NOT NULL,
  trace_id         TEXT NOT NULL,
  span_id          TEXT NOT NULL
) WITHOUT ROWID;
