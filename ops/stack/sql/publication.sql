-- Publication and grants for Debezium (run as the owner of the tables, after ops/db/schema.sql;
-- idempotent). Debezium runs with publication.autocreate.mode=disabled: it never creates or alters
-- this publication, so its login role needs no ownership. psql variable: cdc_user.
DO $$
DECLARE
  captured text[] := ARRAY['companies', 'api_keys', 'api_key_companies', 'sites', 'site_contacts',
                           'services', 'equipment_categories', 'equipment', 'consumables'];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'pda_publication') THEN
    CREATE PUBLICATION pda_publication;
  END IF;
  -- Only touch the publication when its table list differs: a re-run of `stack.sh up` must not
  -- churn the catalog under a streaming connector.
  IF (SELECT coalesce(array_agg(tablename::text ORDER BY tablename::text COLLATE "C"), '{}')
        FROM pg_publication_tables WHERE pubname = 'pda_publication' AND schemaname = 'public')
     IS DISTINCT FROM (SELECT array_agg(t ORDER BY t COLLATE "C") FROM unnest(captured) AS t)
     OR EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = 'pda_publication' AND schemaname <> 'public')
  THEN
    ALTER PUBLICATION pda_publication SET TABLE
      companies, api_keys, api_key_companies, sites, site_contacts, services,
      equipment_categories, equipment, consumables;
  END IF;
END $$;

SELECT format('GRANT USAGE ON SCHEMA public TO %I', :'cdc_user') \gexec
SELECT format('GRANT SELECT ON companies, api_keys, api_key_companies, sites, site_contacts, services, '
              'equipment_categories, equipment, consumables TO %I', :'cdc_user') \gexec
