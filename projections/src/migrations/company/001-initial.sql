-- Company projection file: DATA_DIR/companies/<company_id>.sqlite, one per company.
-- Shaped for export (docs/public-data-api-v1.md, "Resources and their fields"). Written only by
-- ingest; the api opens it read-only.
--
-- Every column has a comment: docs/data-dictionary.md is generated from these comments and the
-- table registry (analysts/README.md). A comment's trailing [..] is the column's unit or format.
--
-- Columns every resource table shares (a table's own comment on one of them wins):
--   id           the record's id (uuid as lowercase text), the source row's primary key
--   created_at   when the source row was created, by the operational database's clock
--                [ISO 8601 UTC, µs]
--   updated_at   when the source row was last updated, by the operational database's clock
--                [ISO 8601 UTC, µs]
--   _src_lsn     source position of the change that wrote this row (Debezium source.lsn, a
--                per-row monotonic WAL position); an incoming change with lsn <= _src_lsn is skipped.
--   _changed_us  projection change time: microseconds since epoch, assigned by the single writer in
--                commit order, strictly increasing per file (meta.last_changed_us). The api's
--                filter[updated_since] compares with it, never with updated_at
--                (docs/decisions/0004-change-time-for-updated-since.md). [µs since 1970-01-01 UTC]
-- Money is amount TEXT (exact decimal string) + currency TEXT; timestamps are ISO 8601 UTC TEXT
-- with microsecond precision ('2026-01-31T12:00:00.123456Z').

-- The file's own state, one row.
CREATE TABLE meta (
  lock            INTEGER PRIMARY KEY CHECK (lock = 1), -- always 1: keeps the table at one row
  company_id      TEXT NOT NULL,                        -- the company this file holds (its file name)
  last_changed_us INTEGER NOT NULL DEFAULT 0           -- highest _changed_us handed out in this file [µs since 1970-01-01 UTC]
);

-- Serviced sites (the places where the company works), exported as /v1/sites.
CREATE TABLE sites (
  id                   TEXT PRIMARY KEY,
  name                 TEXT NOT NULL,   -- the site's name as the company's clients know it
  name_for_operators   TEXT NOT NULL,   -- the name shown to the company's field operators ('' when none)
  site_reference       TEXT NOT NULL,   -- the company's own reference for the site ('' when none)
  client_reference     TEXT NOT NULL,   -- the client's reference for the site ('' when none)
  client_company_id    TEXT NOT NULL,   -- the client company's id in the company's own books (free text, '' when none)
  notes                TEXT NOT NULL,   -- free-text notes ('' when none; a few are very long)
  area                 REAL,            -- serviced area, NULL when unknown [m²]
  address_line1        TEXT NOT NULL,   -- street address, first line
  address_line2        TEXT NOT NULL,   -- street address, second line ('' when none)
  city                 TEXT NOT NULL,   -- city or town
  region               TEXT NOT NULL,   -- state, province or region ('' when none)
  postal_code          TEXT NOT NULL,   -- postal code in the country's own format
  country              TEXT NOT NULL,   -- country code [ISO 3166-1 alpha-2]
  latitude             REAL,            -- NULL when not geocoded [degrees, WGS 84]
  longitude            REAL,            -- NULL when not geocoded [degrees, WGS 84]
  coordinates_accuracy TEXT,            -- how the coordinates were found: rooftop, street, postal_code or manual; NULL when not geocoded
  geocoded_at          TEXT,            -- when the coordinates were found, NULL when not geocoded [ISO 8601 UTC, µs]
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  _src_lsn             INTEGER NOT NULL,
  _changed_us          INTEGER NOT NULL
) STRICT;
CREATE INDEX sites_by_name       ON sites (name, id);
CREATE INDEX sites_by_created_at ON sites (created_at, id);
CREATE INDEX sites_by_updated_at ON sites (updated_at, id);
CREATE INDEX sites_by_changed    ON sites (_changed_us, id);

-- People to call at a site. Embedded in sites with include=contacts; a contact change also moves
-- its site's _changed_us.
CREATE TABLE site_contacts (
  id          TEXT PRIMARY KEY,
  site_id     TEXT NOT NULL,   -- the site (sites.id) the contact belongs to
  name        TEXT NOT NULL,   -- the contact's full name
  role        TEXT NOT NULL,   -- the contact's role at the site, free text ('' when none)
  email       TEXT NOT NULL,   -- e-mail address ('' when none)
  phone       TEXT NOT NULL,   -- phone number as entered, often international format ('' when none)
  phone_type  TEXT NOT NULL,   -- mobile, office, home or other
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  _src_lsn    INTEGER NOT NULL,
  _changed_us INTEGER NOT NULL
) STRICT;
CREATE INDEX site_contacts_by_site ON site_contacts (site_id, id);

-- Priced services the company offers (plowing, salting, mowing...), exported as /v1/services.
-- client_*: what the company charges its client; subcontractor_*: what it pays a subcontractor.
CREATE TABLE services (
  id                            TEXT PRIMARY KEY,
  name                          TEXT NOT NULL,   -- the service's name as clients see it
  name_for_operators            TEXT NOT NULL,   -- the name shown to field operators ('' when none)
  client_description            TEXT NOT NULL,   -- description shown to clients ('' when none)
  color                         TEXT NOT NULL,   -- display colour [#rrggbb]
  client_charge_type            TEXT NOT NULL,   -- how the client is charged: hourly, per_visit, per_push or seasonal
  client_rate_amount            TEXT NOT NULL,   -- what the client pays per charge unit, exact decimal string [currency in client_rate_currency]
  client_rate_currency          TEXT NOT NULL,   -- currency of client_rate_amount [ISO 4217]
  client_minimum_minutes        INTEGER NOT NULL, -- minimum time billed to the client per visit, 0 when none [minutes]
  subcontractor_charge_type     TEXT NOT NULL,   -- how a subcontractor is paid: hourly, per_visit, per_push or seasonal
  subcontractor_rate_amount     TEXT NOT NULL,   -- what the company pays a subcontractor per charge unit, exact decimal string [currency in subcontractor_rate_currency]
  subcontractor_rate_currency   TEXT NOT NULL,   -- currency of subcontractor_rate_amount [ISO 4217]
  subcontractor_minimum_minutes INTEGER NOT NULL, -- minimum time paid to a subcontractor per visit, 0 when none [minutes]
  created_at                    TEXT NOT NULL,
  updated_at                    TEXT NOT NULL,
  _src_lsn                      INTEGER NOT NULL,
  _changed_us                   INTEGER NOT NULL
) STRICT;
CREATE INDEX services_by_name       ON services (name, id);
CREATE INDEX services_by_created_at ON services (created_at, id);
CREATE INDEX services_by_updated_at ON services (updated_at, id);
CREATE INDEX services_by_changed    ON services (_changed_us, id);

-- Kinds of equipment (plow trucks, skid steers, spreaders...) with their default rates, exported
-- as /v1/equipment-categories. Embedded in equipment with include=category; a category change also
-- moves the _changed_us of every equipment row of that category.
CREATE TABLE equipment_categories (
  id                                  TEXT PRIMARY KEY,
  name                                TEXT NOT NULL,   -- the category's name
  group_name                          TEXT NOT NULL,   -- the group the category belongs to (vehicles, loaders, spreaders...); exported as "group"
  default_client_rate_amount          TEXT NOT NULL,   -- default rate charged to clients for equipment of this category, exact decimal string [currency in default_client_rate_currency]
  default_client_rate_currency        TEXT NOT NULL,   -- currency of default_client_rate_amount [ISO 4217]
  default_subcontractor_rate_amount   TEXT NOT NULL,   -- default rate paid to subcontractors for equipment of this category, exact decimal string [currency in default_subcontractor_rate_currency]
  default_subcontractor_rate_currency TEXT NOT NULL,   -- currency of default_subcontractor_rate_amount [ISO 4217]
  created_at                          TEXT NOT NULL,
  updated_at                          TEXT NOT NULL,
  _src_lsn                            INTEGER NOT NULL,
  _changed_us                         INTEGER NOT NULL
) STRICT;
CREATE INDEX equipment_categories_by_name       ON equipment_categories (name, id);
CREATE INDEX equipment_categories_by_created_at ON equipment_categories (created_at, id);
CREATE INDEX equipment_categories_by_updated_at ON equipment_categories (updated_at, id);
CREATE INDEX equipment_categories_by_changed    ON equipment_categories (_changed_us, id);

-- The company's pieces of equipment, exported as /v1/equipment. Equipment has no rate of its own:
-- its pricing is its category's.
CREATE TABLE equipment (
  id                  TEXT PRIMARY KEY,
  category_id         TEXT NOT NULL,   -- the equipment's category (equipment_categories.id)
  name                TEXT NOT NULL,   -- the equipment's name
  name_for_operators  TEXT NOT NULL,   -- the name shown to field operators ('' when none)
  client_description  TEXT NOT NULL,   -- description shown to clients ('' when none)
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

-- Materials the company uses up and bills (rock salt, sand, brine, mulch...), exported as
-- /v1/consumables.
CREATE TABLE consumables (
  id                                  TEXT PRIMARY KEY,
  name                                TEXT NOT NULL,   -- the consumable's name
  name_for_operators                  TEXT NOT NULL,   -- the name shown to field operators ('' when none)
  client_description                  TEXT NOT NULL,   -- description shown to clients ('' when none)
  group_name                          TEXT NOT NULL,   -- the group the consumable belongs to (de_icing, traction, landscaping...); exported as "group"
  default_client_rate_amount          TEXT NOT NULL,   -- default rate charged to clients, exact decimal string [currency in default_client_rate_currency]
  default_client_rate_currency        TEXT NOT NULL,   -- currency of default_client_rate_amount [ISO 4217]
  default_subcontractor_rate_amount   TEXT NOT NULL,   -- default rate paid to subcontractors, exact decimal string [currency in default_subcontractor_rate_currency]
  default_subcontractor_rate_currency TEXT NOT NULL,   -- currency of default_subcontractor_rate_amount [ISO 4217]
  created_at                          TEXT NOT NULL,
  updated_at                          TEXT NOT NULL,
  _src_lsn                            INTEGER NOT NULL,
  _changed_us                         INTEGER NOT NULL
) STRICT;
CREATE INDEX consumables_by_name       ON consumables (name, id);
CREATE INDEX consumables_by_created_at ON consumables (created_at, id);
CREATE INDEX consumables_by_updated_at ON consumables (updated_at, id);
CREATE INDEX consumables_by_changed    ON consumables (_changed_us, id);

-- Versioned delete markers: a late, older event for a deleted row must not bring it back. The api
-- lists them as the deletions feed (GET /v1/deletions).
CREATE TABLE tombstones (
  table_name  TEXT NOT NULL,      -- the source table of the deleted row (sites, site_contacts, services, ...)
  id          TEXT NOT NULL,      -- the deleted row's id
  _src_lsn    INTEGER NOT NULL,   -- source position of the delete; older changes of the row are skipped
  _changed_us INTEGER NOT NULL,   -- projection change time of the delete: when it was projected [µs since 1970-01-01 UTC]
  PRIMARY KEY (table_name, id)
) STRICT;
