-- Control file, schema version 4: damaged company files are taken out of service, one company at a
-- time (projections/README.md, "Damaged company files"; docs/operations.md, "Rebuild a projection").

-- Every company whose file the writer has written: a file that is missing while its company is
-- listed here was deleted, not "not created yet", and is never silently created again empty.
CREATE TABLE company_files (
  company_id  TEXT PRIMARY KEY -- the company (its file is companies/<company_id>.sqlite)
) STRICT, WITHOUT ROWID;
INSERT INTO company_files (company_id) SELECT DISTINCT company_id FROM routes;

-- Company files out of service: ingest applies nothing to a damaged file (its changes wait for the
-- per-company rebuild, which reads them again from Kafka), and the api answers 503 for the company
-- while its row is here, damaged or rebuilding.
CREATE TABLE company_faults (
  company_id       TEXT PRIMARY KEY, -- the company whose file is out of service
  state            TEXT NOT NULL CHECK (state IN ('damaged', 'rebuilding')), -- damaged: waiting for a rebuild; rebuilding: being rebuilt in place
  reason           TEXT NOT NULL,    -- what was found: 'missing' (deleted), 'corrupt' (SQLite: not a database / malformed), with SQLite's message
  detected_at_ms   INTEGER NOT NULL, -- when the writer found it [ms since 1970-01-01 UTC]
  moved_to         TEXT,             -- where the damaged file was moved (companies/<id>.sqlite.damaged-<ms>), NULL when it was gone
  rebuild_started_at_ms INTEGER      -- when its rebuild started (state rebuilding) [ms since 1970-01-01 UTC]
) STRICT;
