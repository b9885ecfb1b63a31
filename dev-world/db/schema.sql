-- The vendor's operational database: a realistic copy of the tables the read side captures.
-- Applied by `dev-world/stack/stack.sh up` (idempotent: every statement is IF NOT EXISTS / OR REPLACE).
--
-- Conventions (how they look once projected: projections/README.md, "Conventions (every file)"):
-- * ids are uuid (exported as strings); every tenant table has company_id, created_at, updated_at;
-- * created_at/updated_at are maintained by the database (defaults + the touch_updated_at trigger);
-- * money is numeric(12,2) + an ISO 4217 currency char(3); timestamps are timestamptz;
-- * REPLICA IDENTITY stays at PostgreSQL's default (primary key) like the vendor's real database:
--   updates arrive with before = null and deletes carry only the key.

CREATE EXTENSION IF NOT EXISTS pgcrypto; -- gen_random_uuid() on PG < 13, digest() for key hashes

CREATE OR REPLACE FUNCTION touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TABLE IF NOT EXISTS companies (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name        text NOT NULL,
  currency    char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- An API key is shown once at creation; only its SHA-256 (hex) is stored.
-- identifier shown to users = prefix || '…' || last_four.
CREATE TABLE IF NOT EXISTS api_keys (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name        text NOT NULL,
  prefix      text NOT NULL DEFAULT 'svc_pk_' CHECK (prefix LIKE 'svc\_pk\_%'),
  last_four   char(4) NOT NULL,
  key_sha256  char(64) NOT NULL UNIQUE CHECK (key_sha256 ~ '^[0-9a-f]{64}$'),
  scopes      text[] NOT NULL DEFAULT '{}',
  expires_at  timestamptz,
  revokes_at  timestamptz,   -- set when a replacement was issued: the key stops working then
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Which companies a key may act for (a key may hold several; X-Service-Company selects).
CREATE TABLE IF NOT EXISTS api_key_companies (
  api_key_id  uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  company_id  uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (api_key_id, company_id)
);

CREATE TABLE IF NOT EXISTS sites (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id           uuid NOT NULL REFERENCES companies (id),
  name                 text NOT NULL,
  name_for_operators   text NOT NULL DEFAULT '',
  site_reference       text NOT NULL DEFAULT '',
  client_reference     text NOT NULL DEFAULT '',
  client_company_id    text NOT NULL DEFAULT '',
  notes                text NOT NULL DEFAULT '',          -- may be large (TOAST)
  area                 numeric(12,2),                     -- square metres
  address_line1        text NOT NULL DEFAULT '',
  address_line2        text NOT NULL DEFAULT '',
  city                 text NOT NULL DEFAULT '',
  region               text NOT NULL DEFAULT '',
  postal_code          text NOT NULL DEFAULT '',
  country              char(2) NOT NULL DEFAULT 'US',
  latitude             numeric(9,6),
  longitude            numeric(9,6),
  coordinates_accuracy text,                              -- rooftop | street | postal_code | manual
  geocoded_at          timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS sites_company_idx ON sites (company_id, id);

CREATE TABLE IF NOT EXISTS site_contacts (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id  uuid NOT NULL REFERENCES companies (id),
  site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  name        text NOT NULL,
  role        text NOT NULL DEFAULT '',
  email       text NOT NULL DEFAULT '',
  phone       text NOT NULL DEFAULT '',
  phone_type  text NOT NULL DEFAULT 'mobile',            -- mobile | office | home | other
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS site_contacts_site_idx ON site_contacts (site_id);

CREATE TABLE IF NOT EXISTS services (
  id                            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id                    uuid NOT NULL REFERENCES companies (id),
  name                          text NOT NULL,
  name_for_operators            text NOT NULL DEFAULT '',
  client_description            text NOT NULL DEFAULT '',
  color                         char(7) NOT NULL DEFAULT '#1f77b4' CHECK (color ~ '^#[0-9a-f]{6}$'),
  client_charge_type            text NOT NULL,            -- hourly | per_visit | per_push | seasonal
  client_rate_amount            numeric(12,2) NOT NULL,
  client_rate_currency          char(3) NOT NULL,
  client_minimum_minutes        integer NOT NULL DEFAULT 0,
  subcontractor_charge_type     text NOT NULL,
  subcontractor_rate_amount     numeric(12,2) NOT NULL,
  subcontractor_rate_currency   char(3) NOT NULL,
  subcontractor_minimum_minutes integer NOT NULL DEFAULT 0,
  created_at                    timestamptz NOT NULL DEFAULT now(),
  updated_at                    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS services_company_idx ON services (company_id, id);

CREATE TABLE IF NOT EXISTS equipment_categories (
  id                                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id                         uuid NOT NULL REFERENCES companies (id),
  name                               text NOT NULL,
  group_name                         text NOT NULL,       -- vehicles | loaders | spreaders | hand_tools ...
  default_client_rate_amount         numeric(12,2) NOT NULL,
  default_client_rate_currency       char(3) NOT NULL,
  default_subcontractor_rate_amount  numeric(12,2) NOT NULL,
  default_subcontractor_rate_currency char(3) NOT NULL,
  created_at                         timestamptz NOT NULL DEFAULT now(),
  updated_at                         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS equipment_categories_company_idx ON equipment_categories (company_id, id);

CREATE TABLE IF NOT EXISTS equipment (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id          uuid NOT NULL REFERENCES companies (id),
  category_id         uuid NOT NULL REFERENCES equipment_categories (id),
  name                text NOT NULL,
  name_for_operators  text NOT NULL DEFAULT '',
  client_description  text NOT NULL DEFAULT '',
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS equipment_company_idx ON equipment (company_id, id);
CREATE INDEX IF NOT EXISTS equipment_category_idx ON equipment (category_id);

CREATE TABLE IF NOT EXISTS consumables (
  id                                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id                          uuid NOT NULL REFERENCES companies (id),
  name                                text NOT NULL,
  name_for_operators                  text NOT NULL DEFAULT '',
  client_description                  text NOT NULL DEFAULT '',
  group_name                          text NOT NULL,      -- de_icing | traction | landscaping ...
  default_client_rate_amount          numeric(12,2) NOT NULL,
  default_client_rate_currency        char(3) NOT NULL,
  default_subcontractor_rate_amount   numeric(12,2) NOT NULL,
  default_subcontractor_rate_currency char(3) NOT NULL,
  created_at                          timestamptz NOT NULL DEFAULT now(),
  updated_at                          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS consumables_company_idx ON consumables (company_id, id);

-- updated_at is the database's job, not the application's.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['companies','api_keys','api_key_companies','sites','site_contacts','services',
                           'equipment_categories','equipment','consumables'] LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS %I_touch ON %I', t, t);
    EXECUTE format('CREATE TRIGGER %I_touch BEFORE UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION touch_updated_at()', t, t);
  END LOOP;
END $$;
