-- Company projection file: DATA_DIR/companies/<company_id>.sqlite, one per company.
-- Shaped for export (docs/public-data-api-v1.md, "Resources and their fields"). Written only by
-- ingest; the api opens it read-only.
--
-- Columns every resource table shares:
--   _src_lsn     source position of the change that wrote this row (Debezium source.lsn, a
--                per-row monotonic WAL position); an incoming change with lsn <= _src_lsn is skipped.
--   _changed_us  projection change time: microseconds since epoch, assigned by the single writer in
--                commit order, strictly increasing per file (meta.last_changed_us). The api's
--                filter[updated_since] compares with it, never with updated_at
--                (docs/decisions/0004-change-time-for-updated-since.md).
-- Money is amount TEXT (exact decimal string) + currency TEXT; timestamps are ISO 8601 UTC TEXT
-- with microsecond precision ('2026-01-31T12:00:00.123456Z').

CREATE TABLE meta (
  lock            INTEGER PRIMARY KEY CHECK (lock = 1), -- single-row table
  company_id      TEXT NOT NULL,
  last_changed_us INTEGER NOT NULL DEFAULT 0           -- highest _changed_us handed out in this file
);

CREATE TABLE sites (
  id                   TEXT PRIMARY KEY,
  name                 TEXT NOT NULL,
  name_for_operators   TEXT NOT NULL,
  site_reference       TEXT NOT NULL,
  client_reference     TEXT NOT NULL,
  client_company_id    TEXT NOT NULL,
  notes                TEXT NOT NULL,
  area                 REAL,            -- square metres
  address_line1        TEXT NOT NULL,
  address_line2        TEXT NOT NULL,
  city                 TEXT NOT NULL,
  region               TEXT NOT NULL,
  postal_code          TEXT NOT NULL,
  country              TEXT NOT NULL,   -- ISO 3166-1 alpha-2
  latitude             REAL,
  longitude            REAL,
  coordinates_accuracy TEXT,
  geocoded_at          TEXT,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  _src_lsn             INTEGER NOT NULL,
  _changed_us          INTEGER NOT NULL
) STRICT;
CREATE INDEX sites_by_name       ON sites (name, id);
CREATE INDEX sites_by_created_at ON sites (created_at, id);
CREATE INDEX sites_by_updated_at ON sites (updated_at, id);
CREATE INDEX sites_by_changed    ON sites (_changed_us, id);

-- Embedded in sites with include=contacts; a contact change also moves its site's _changed_us.
CREATE TABLE site_contacts (
  id          TEXT PRIMARY KEY,
  site_id     TEXT NOT NULL,
  name        TEXT NOT NULL,
  role        TEXT NOT NULL,
  email       TEXT NOT NULL,
  phone       TEXT NOT NULL,
  phone_type  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL,
  _changed_us INTEGER NOT NULL
) STRICT;
CREATE INDEX site_contacts_by_site ON site_contacts (site_id, id);

CREATE TABLE services (
  id                            TEXT PRIMARY KEY,
  name                          TEXT NOT NULL,
  name_for_operators            TEXT NOT NULL,
  client_description            TEXT NOT NULL,
  color                         TEXT NOT NULL,   -- '#rrggbb'
  client_charge_type            TEXT NOT NULL,
  client_rate_amount            TEXT NOT NULL,   -- exact decimal string
  client_rate_currency          TEXT NOT NULL,
  client_minimum_minutes        INTEGER NOT NULL,
  subcontractor_charge_type     TEXT NOT NULL,
  subcontractor_rate_amount     TEXT NOT NULL,
  subcontractor_rate_currency   TEXT NOT NULL,
  subcontractor_minimum_minutes INTEGER NOT NULL,
  created_at                    TEXT NOT NULL,
  updated_at                    TEXT NOT NULL,
  _src_lsn                      INTEGER NOT NULL,
  _changed_us                   INTEGER NOT NULL
) STRICT;
CREATE INDEX services_by_name       ON services (name, id);
CREATE INDEX services_by_created_at ON services (created_at, id);
CREATE INDEX services_by_updated_at ON services (updated_at, id);
CREATE INDEX services_by_changed    ON services (_changed_us, id);

-- Embedded in equipment with include=category; a category change also moves the _changed_us of
-- every equipment row of that category.
CREATE TABLE equipment_categories (
  id                                  TEXT PRIMARY KEY,
  name                                TEXT NOT NULL,
  group_name                          TEXT NOT NULL,   -- exported as "group"
  default_client_rate_amount          TEXT NOT NULL,
  default_client_rate_currency        TEXT NOT NULL,
  default_subcontractor_rate_amount   TEXT NOT NULL,
  default_subcontractor_rate_currency TEXT NOT NULL,
  created_at                          TEXT NOT NULL,
  updated_at                          TEXT NOT NULL,
  _src_lsn                            INTEGER NOT NULL,
  _changed_us                         INTEGER NOT NULL
) STRICT;
CREATE INDEX equipment_categories_by_name       ON equipment_categories (name, id);
CREATE INDEX equipment_categories_by_created_at ON equipment_categories (created_at, id);
CREATE INDEX equipment_categories_by_updated_at ON equipment_categories (updated_at, id);
CREATE INDEX equipment_categories_by_changed    ON equipment_categories (_changed_us, id);

CREATE TABLE equipment (
  id                  TEXT PRIMARY KEY,
  category_id         TEXT NOT NULL,
  name                TEXT NOT NULL,
  name_for_operators  TEXT NOT NULL,
  client_description  TEXT NOT NULL,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  _src_lsn            INTEGER NOT NULL,
  _changed_us         INTEGER NOT NULL
) STRICT;
CREATE INDEX equipment_by_name       ON equipment (name, id);
CREATE INDEX equipment_by_created_at ON equipment (created_at, id);
CREATE INDEX equipment_by_updated_at ON equipment (updated_at, id);
CREATE INDEX equipment_by_changed    ON equipment (_changed_us, id);
CREATE INDEX equipment_by_category   ON equipment (category_id);

CREATE TABLE consumables (
  id                                  TEXT PRIMARY KEY,
  name                                TEXT NOT NULL,
  name_for_operators                  TEXT NOT NULL,
  client_description                  TEXT NOT NULL,
  group_name                          TEXT NOT NULL,   -- exported as "group"
  default_client_rate_amount          TEXT NOT NULL,
  default_client_rate_currency        TEXT NOT NULL,
  default_subcontractor_rate_amount   TEXT NOT NULL,
  default_subcontractor_rate_currency TEXT NOT NULL,
  created_at                          TEXT NOT NULL,
  updated_at                          TEXT NOT NULL,
  _src_lsn                            INTEGER NOT NULL,
  _changed_us                         INTEGER NOT NULL
) STRICT;
CREATE INDEX consumables_by_name       ON consumables (name, id);
CREATE INDEX consumables_by_created_at ON consumables (created_at, id);
CREATE INDEX consumables_by_updated_at ON consumables (updated_at, id);
CREATE INDEX consumables_by_changed    ON consumables (_changed_us, id);

-- Versioned delete markers: a late, older event for a deleted row must not bring it back.
-- table_name is the source table (sites, site_contacts, services, ...).
CREATE TABLE tombstones (
  table_name  TEXT NOT NULL,
  id          TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL,
  _changed_us INTEGER NOT NULL,
  PRIMARY KEY (table_name, id)
) STRICT;
