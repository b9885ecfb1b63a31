-- Replica identity for company-keyed partitions (PDA_DATA_PARTITIONS > 1, dev-world/stack/README.md,
-- "Partitioned topics"; docs/operations.md). Not part of the vendor's schema (dev-world/db/schema.sql keeps
-- PostgreSQL's default identity): applied beside it by `stack.sh up` / `stack.sh database create`,
-- compose's postgres init and the testcontainers stack, only when the topics are partitioned.
--
-- Why: Debezium's PartitionRouting sends each tenant event to the partition of `change.company_id`
-- (after.company_id, or before.company_id for a delete). With the default identity a delete's
-- before image holds only the primary key, so it would land on another partition than the row's
-- other events. With the identity below, deletes (and updates that change company_id) log the old
-- (company_id, id), and an update moving a row to another company becomes, with the connector's
-- message.key.columns (id, company_id), a delete on the old company's partition and a create on
-- the new one.
--
-- Cost: one more unique B-tree per tenant table (about 60 MB per million rows with uuid keys: one
-- more random index insert per row inserted), +16 bytes of WAL per delete and per company-changing
-- update. Plain updates log nothing more.
--
-- Idempotent, and safe on a live database: the indexes are built CONCURRENTLY (no write lock while
-- they build; must run outside a transaction: psql -f, no --single-transaction), and the ALTER
-- TABLE (a short ACCESS EXCLUSIVE lock) runs only for a table whose identity is not that index yet.
-- A CONCURRENTLY build that failed leaves an INVALID index of that name: drop it and run again.
\set ON_ERROR_STOP on

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS sites_company_id_id_identity ON sites (company_id, id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS site_contacts_company_id_id_identity ON site_contacts (company_id, id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS services_company_id_id_identity ON services (company_id, id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS equipment_categories_company_id_id_identity ON equipment_categories (company_id, id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS equipment_company_id_id_identity ON equipment (company_id, id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS consumables_company_id_id_identity ON consumables (company_id, id);

SELECT format('ALTER TABLE %I REPLICA IDENTITY USING INDEX %I', t.relname, t.relname || '_company_id_id_identity')
FROM pg_class t
WHERE t.relkind = 'r'
  AND t.relnamespace = 'public'::regnamespace
  AND t.relname IN ('sites', 'site_contacts', 'services', 'equipment_categories', 'equipment', 'consumables')
  AND NOT EXISTS (
    SELECT 1 FROM pg_index i
    WHERE i.indrelid = t.oid AND i.indisreplident
      AND i.indexrelid = (quote_ident(t.relname || '_company_id_id_identity'))::regclass
  )
ORDER BY t.relname
\gexec
