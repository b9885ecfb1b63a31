-- Roles of the operational database (run as a superuser; idempotent).
-- psql variables: app_user, cdc_user, dbname. The passwords come from the environment variables
-- PDA_PG_PASSWORD (app_user's) and PDA_DEBEZIUM_PASSWORD (cdc_user's) through psql 15's \getenv,
-- not from psql's command line, which every user of the machine can read (`ps`).
-- * app_user owns the database and the captured tables (seed, tests, the publication);
-- * cdc_user is what Debezium logs in as: LOGIN REPLICATION + SELECT only, never table owner.
\getenv app_password PDA_PG_PASSWORD
\getenv cdc_password PDA_DEBEZIUM_PASSWORD
\if :{?app_password}
\else
DO $$ BEGIN RAISE EXCEPTION 'roles.sql: the environment variable PDA_PG_PASSWORD is not set'; END $$;
\endif
\if :{?cdc_password}
\else
DO $$ BEGIN RAISE EXCEPTION 'roles.sql: the environment variable PDA_DEBEZIUM_PASSWORD is not set'; END $$;
\endif

SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'app_user', :'app_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'app_user') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'app_user', :'app_password') \gexec

SELECT format('CREATE ROLE %I LOGIN REPLICATION PASSWORD %L', :'cdc_user', :'cdc_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'cdc_user') \gexec
SELECT format('ALTER ROLE %I LOGIN REPLICATION PASSWORD %L', :'cdc_user', :'cdc_password') \gexec

SELECT format('CREATE DATABASE %I OWNER %I', :'dbname', :'app_user')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'dbname') \gexec
