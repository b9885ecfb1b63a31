-- Roles of the operational database (run as a superuser; idempotent).
-- psql variables: app_user, app_password, cdc_user, cdc_password, dbname.
-- * app_user owns the database and the captured tables (seed, tests, the publication);
-- * cdc_user is what Debezium logs in as: LOGIN REPLICATION + SELECT only, never table owner.
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'app_user', :'app_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'app_user') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'app_user', :'app_password') \gexec

SELECT format('CREATE ROLE %I LOGIN REPLICATION PASSWORD %L', :'cdc_user', :'cdc_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'cdc_user') \gexec
SELECT format('ALTER ROLE %I LOGIN REPLICATION PASSWORD %L', :'cdc_user', :'cdc_password') \gexec

SELECT format('CREATE DATABASE %I OWNER %I', :'dbname', :'app_user')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'dbname') \gexec
