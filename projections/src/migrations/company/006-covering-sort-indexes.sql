-- Company file, schema version 6: sort indexes that carry the change time, so that a page with a
-- since (filter[updated_since] or a sync token) reads a bounded number of index entries however
-- the changed rows lie (projections/README.md, "Pages with a since").
--
-- A since page walks its sort's index from the cursor's position and keeps the entries whose
-- _changed_us is at or after the since. With the change time in the index that walk reads no row
-- for an entry it passes (an index-only step, about 10x cheaper than a row read), so it can stop
-- at a budget of entries and hand back the position where it stopped, instead of reading every
-- row between two matches. The cost: every write that moves a row's change time updates these
-- indexes too (bench/results/, "covering sort indexes").
--
-- `<table>_by_id_changed` is new (the primary key's index holds only the id); the others replace
-- the (column, id) indexes of schema 1 under the same names. (IF EXISTS: a test turns a file back
-- into an older version and upgrades it again.)

DROP INDEX IF EXISTS sites_by_id_changed;
DROP INDEX IF EXISTS sites_by_name;
DROP INDEX IF EXISTS sites_by_created_at;
DROP INDEX IF EXISTS sites_by_updated_at;
CREATE INDEX sites_by_id_changed ON sites (id, _changed_us);
CREATE INDEX sites_by_name       ON sites (name, id, _changed_us);
CREATE INDEX sites_by_created_at ON sites (created_at, id, _changed_us);
CREATE INDEX sites_by_updated_at ON sites (updated_at, id, _changed_us);

DROP INDEX IF EXISTS services_by_id_changed;
DROP INDEX IF EXISTS services_by_name;
DROP INDEX IF EXISTS services_by_created_at;
DROP INDEX IF EXISTS services_by_updated_at;
CREATE INDEX services_by_id_changed ON services (id, _changed_us);
CREATE INDEX services_by_name       ON services (name, id, _changed_us);
CREATE INDEX services_by_created_at ON services (created_at, id, _changed_us);
CREATE INDEX services_by_updated_at ON services (updated_at, id, _changed_us);

DROP INDEX IF EXISTS equipment_categories_by_id_changed;
DROP INDEX IF EXISTS equipment_categories_by_name;
DROP INDEX IF EXISTS equipment_categories_by_created_at;
DROP INDEX IF EXISTS equipment_categories_by_updated_at;
CREATE INDEX equipment_categories_by_id_changed ON equipment_categories (id, _changed_us);
CREATE INDEX equipment_categories_by_name       ON equipment_categories (name, id, _changed_us);
CREATE INDEX equipment_categories_by_created_at ON equipment_categories (created_at, id, _changed_us);
CREATE INDEX equipment_categories_by_updated_at ON equipment_categories (updated_at, id, _changed_us);

DROP INDEX IF EXISTS equipment_by_id_changed;
DROP INDEX IF EXISTS equipment_by_name;
DROP INDEX IF EXISTS equipment_by_created_at;
DROP INDEX IF EXISTS equipment_by_updated_at;
CREATE INDEX equipment_by_id_changed ON equipment (id, _changed_us);
CREATE INDEX equipment_by_name       ON equipment (name, id, _changed_us);
CREATE INDEX equipment_by_created_at ON equipment (created_at, id, _changed_us);
CREATE INDEX equipment_by_updated_at ON equipment (updated_at, id, _changed_us);

DROP INDEX IF EXISTS consumables_by_id_changed;
DROP INDEX IF EXISTS consumables_by_name;
DROP INDEX IF EXISTS consumables_by_created_at;
DROP INDEX IF EXISTS consumables_by_updated_at;
CREATE INDEX consumables_by_id_changed ON consumables (id, _changed_us);
CREATE INDEX consumables_by_name       ON consumables (name, id, _changed_us);
CREATE INDEX consumables_by_created_at ON consumables (created_at, id, _changed_us);
CREATE INDEX consumables_by_updated_at ON consumables (updated_at, id, _changed_us);
