-- The schema registry's own role and database on the stack's PostgreSQL (run as a superuser;
-- idempotent). psql variables: registry_user, registry_db; the password comes from the environment
-- variable PDA_REGISTRY_DB_PASSWORD (psql 15's \getenv), not from psql's command line, which every
-- user of the machine can read (`ps`).
-- Apicurio Registry creates its tables there at its first start (apicurio.sql.init=true) and keeps
-- every schema version in them, so schemas and their ids survive restarts of the registry.
\getenv registry_password PDA_REGISTRY_DB_PASSWORD
\if :{?registry_password}
\else
DO $$ BEGIN
  RAISE EXCEPTION 'registry-db.sql: the environment variable PDA_REGISTRY_DB_PASSWORD is not set';
END $$;
\endif

SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'registry_user', :'registry_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'registry_user') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'registry_user', :'registry_password') \gexec

SELECT format('CREATE DATABASE %I OWNER %I', :'registry_db', :'registry_user')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'registry_db') \gexec
