-- Control file, schema version 3: how far behind its source the projection is, even while nothing
-- changes (projections/README.md, "ingest_state").

-- source_current_at_ms: a source time up to which every change is known to be applied. Ingest
-- writes it from Debezium's heartbeats: a heartbeat's time, once every data partition's lag was 0
-- after it arrived (ingest/README.md, "Freshness and heartbeats"). NULL until the first one.
-- [ms since 1970-01-01 UTC]
ALTER TABLE ingest_state ADD COLUMN source_current_at_ms INTEGER;
