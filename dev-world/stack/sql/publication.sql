-- Publication and grants for Debezium (run as the owner of the tables, after dev-world/db/schema.sql;
-- idempotent). Debezium runs with publication.autocreate.mode=disabled: it never creates or alters
-- this publication, so its login role needs no ownership. psql variables: cdc_user, and
-- captured_tables, the captured tables comma-separated. That list comes from the table registry
-- (`node dev-world/stack/captured-tables.ts`, run by dev-world/stack/stack.sh and, for docker-compose.yml, by
-- whoever sets PDA_CAPTURED_TABLES): this file names no table, so adding one never edits it.

\if :{?captured_tables}
\else
DO $$ BEGIN
  RAISE EXCEPTION 'publication.sql: psql variable captured_tables is not set (pass -v captured_tables=<t1,t2,...>; node dev-world/stack/captured-tables.ts prints the list)';
END $$;
\endif

-- psql does not interpolate variables inside DO $$ ... $$: the list travels as a session setting.
SET pda.captured_tables = :'captured_tables';

DO $$
DECLARE
  captured text[];
  missing text;
BEGIN
  SELECT coalesce(array_agg(DISTINCT btrim(t)), '{}') INTO captured
    FROM unnest(string_to_array(current_setting('pda.captured_tables'), ',')) AS t
   WHERE btrim(t) <> '';
  IF cardinality(captured) = 0 THEN
    RAISE EXCEPTION 'publication.sql: psql variable captured_tables is empty (node dev-world/stack/captured-tables.ts prints the list)';
  END IF;
  SELECT string_agg(t, ', ' ORDER BY t) INTO missing FROM unnest(captured) AS t
   WHERE NOT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tablename = t);
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'publication.sql: captured table(s) % missing from schema public (dev-world/db/schema.sql creates the registry tables)', missing;
  END IF;
  -- The cleaned-up list, for the GRANT below.
  PERFORM set_config('pda.captured_tables', array_to_string(captured, ','), false);

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
    EXECUTE format('ALTER PUBLICATION pda_publication SET TABLE %s',
                   (SELECT string_agg(format('public.%I', t), ', ') FROM unnest(captured) AS t));
    RAISE NOTICE 'publication pda_publication now holds: %', array_to_string(captured, ', ');
  END IF;
END $$;

SELECT format('GRANT USAGE ON SCHEMA public TO %I', :'cdc_user') \gexec
SELECT format('GRANT SELECT ON %s TO %I', string_agg(format('public.%I', t), ', '), :'cdc_user')
  FROM unnest(string_to_array(current_setting('pda.captured_tables'), ',')) AS t \gexec
