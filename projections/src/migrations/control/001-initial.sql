-- Control projection file: DATA_DIR/control.sqlite. Companies, API keys and their grants, the
-- id → company routing index, and ingest state. Written only by ingest; the api opens it read-only.
-- Every column has a comment (docs/data-dictionary.md is generated from them); a comment's trailing
-- [..] is the column's unit or format.
--
-- Columns the tables share (a table's own comment on one of them wins):
--   id           the record's id (uuid as lowercase text), the source row's primary key
--   created_at   when the source row was created, by the operational database's clock
--                [ISO 8601 UTC, µs]
--   updated_at   when the source row was last updated, by the operational database's clock
--                [ISO 8601 UTC, µs]
--   _src_lsn     source position of the change that wrote this row (Debezium source.lsn); an
--                incoming change with lsn <= _src_lsn is skipped, as in the company files.

-- The vendor's customer companies; each has its file companies/<id>.sqlite once it has rows.
CREATE TABLE companies (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,   -- the company's name
  currency    TEXT NOT NULL,   -- the company's currency [ISO 4217]
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL
) STRICT;

-- API keys partners call the api with (issued by the operator tools' keys CLI in the operational database).
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,   -- the key's label
  prefix      TEXT NOT NULL,   -- 'svc_pk_'; shown to users as prefix || '…' || last_four
  last_four   TEXT NOT NULL,   -- the key's last four characters
  key_sha256  TEXT NOT NULL,   -- lowercase hex SHA-256 of the whole key; the key itself is never stored
  scopes      TEXT NOT NULL,   -- JSON array of '{resource}:{ability}', e.g. '["sites:read"]' (use json_each)
  expires_at  TEXT,            -- when the key stops working, NULL when never [ISO 8601 UTC]
  revokes_at  TEXT,            -- end of the rotation grace period (or revocation time), NULL when not revoked [ISO 8601 UTC]
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX api_keys_by_hash ON api_keys (key_sha256);

-- Which companies a key may act for (X-Service-Company selects one).
CREATE TABLE api_key_companies (
  api_key_id  TEXT NOT NULL,   -- the key (api_keys.id)
  company_id  TEXT NOT NULL,   -- a company (companies.id) the key may act for
  _src_lsn    INTEGER NOT NULL,
  PRIMARY KEY (api_key_id, company_id)
) STRICT;
CREATE INDEX api_key_companies_by_company ON api_key_companies (company_id);

-- Routing index: which company file holds a tenant row. Deletes (and updates) under PostgreSQL's
-- default REPLICA IDENTITY carry only the key, so ingest looks the company up here.
CREATE TABLE routes (
  table_name  TEXT NOT NULL,   -- the tenant table (sites, services, ...)
  id          TEXT NOT NULL,   -- the row's id
  company_id  TEXT NOT NULL,   -- the company whose file holds the row
  PRIMARY KEY (table_name, id)
) STRICT, WITHOUT ROWID;

-- Delete markers for control rows (companies, api_keys, api_key_companies as 'api_key_id/company_id'),
-- and unrouted tombstones: key-only deletes of tenant rows that had no route yet (projections/README.md,
-- "Guarantees").
CREATE TABLE tombstones (
  table_name  TEXT NOT NULL,      -- the source table of the deleted row
  id          TEXT NOT NULL,      -- the deleted row's id ('<api_key_id>/<company_id>' for api_key_companies)
  _src_lsn    INTEGER NOT NULL,   -- source position of the delete; older changes of the row are skipped
  PRIMARY KEY (table_name, id)
) STRICT;

-- Single-row ingest state (what the api's health and ingest's readiness read).
CREATE TABLE ingest_state (
  lock                  INTEGER PRIMARY KEY CHECK (lock = 1), -- always 1: keeps the table at one row
  last_batch_at_ms      INTEGER,   -- wall clock of the last committed batch [ms since 1970-01-01 UTC]
  last_source_ts_ms     INTEGER,   -- source commit time (source.ts_ms) of the last applied change [ms since 1970-01-01 UTC]
  events_applied_total  INTEGER NOT NULL DEFAULT 0 -- changes applied since the file was created
) STRICT;
INSERT INTO ingest_state (lock) VALUES (1);
