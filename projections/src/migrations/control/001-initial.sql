-- Control projection file: DATA_DIR/control.sqlite. Companies, API keys and their grants, the
-- id → company routing index, and ingest state. Written only by ingest; the api opens it read-only.
-- _src_lsn has the same meaning as in the company files (version guard from Debezium source.lsn).

CREATE TABLE companies (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  currency    TEXT NOT NULL,   -- ISO 4217
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  prefix      TEXT NOT NULL,   -- 'svc_pk_'
  last_four   TEXT NOT NULL,
  key_sha256  TEXT NOT NULL,   -- lowercase hex SHA-256 of the whole key; the key itself is never stored
  scopes      TEXT NOT NULL,   -- JSON array of '{resource}:{ability}'
  expires_at  TEXT,            -- ISO 8601 UTC or NULL
  revokes_at  TEXT,            -- ISO 8601 UTC or NULL: end of the rotation grace period
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX api_keys_by_hash ON api_keys (key_sha256);

CREATE TABLE api_key_companies (
  api_key_id  TEXT NOT NULL,
  company_id  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL,
  PRIMARY KEY (api_key_id, company_id)
) STRICT;
CREATE INDEX api_key_companies_by_company ON api_key_companies (company_id);

-- Routing index: which company file holds a tenant row. Deletes (and updates) under PostgreSQL's
-- default REPLICA IDENTITY carry only the key, so ingest looks the company up here.
CREATE TABLE routes (
  table_name  TEXT NOT NULL,
  id          TEXT NOT NULL,
  company_id  TEXT NOT NULL,
  PRIMARY KEY (table_name, id)
) STRICT, WITHOUT ROWID;

-- Delete markers for control rows (companies, api_keys, api_key_companies as 'api_key_id/company_id').
CREATE TABLE tombstones (
  table_name  TEXT NOT NULL,
  id          TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL,
  PRIMARY KEY (table_name, id)
) STRICT;

-- Single-row ingest state (what the api's health and ingest's readiness read).
CREATE TABLE ingest_state (
  lock                  INTEGER PRIMARY KEY CHECK (lock = 1),
  last_batch_at_ms      INTEGER,   -- wall clock of the last committed batch
  last_source_ts_ms     INTEGER,   -- source commit time (source.ts_ms) of the last applied change
  events_applied_total  INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO ingest_state (lock) VALUES (1);
