-- Company file, schema version 3: stored documents (projections/README.md, "Stored documents").

-- _json: the record's JSON as the api serves it, rendered by ingest from the row's columns
-- when it writes the row (schemas/src/registry.ts: the documents and their version). NULL only
-- until the first open by an ingest that knows the documents, which renders every row.
ALTER TABLE sites ADD COLUMN _json TEXT;
ALTER TABLE site_contacts ADD COLUMN _json TEXT;
ALTER TABLE services ADD COLUMN _json TEXT;
ALTER TABLE equipment_categories ADD COLUMN _json TEXT;
ALTER TABLE equipment ADD COLUMN _json TEXT;
ALTER TABLE consumables ADD COLUMN _json TEXT;

-- The version of the documents stored in this file (REPRESENTATION.version of the registry);
-- 0 = not rendered yet.
ALTER TABLE meta ADD COLUMN representation INTEGER NOT NULL DEFAULT 0;
