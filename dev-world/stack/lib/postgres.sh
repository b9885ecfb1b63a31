# shellcheck shell=bash
# PostgreSQL from Debian packages: a private cluster in $PDA_STACK_DIR/postgres on its own port,
# wal_level=logical, the operational schema, a replication role and the publication Debezium reads
# (the captured tables of the table registry, passed to sql/publication.sql).

PG_HOME="${PDA_PG_HOME:-$PDA_STACK_DIR/postgres}"
PG_LOG="$LOG_DIR/postgres.log"

# As root the cluster runs as the `postgres` OS user, which must reach its directory and log. A
# checkout under a private directory (`mktemp -d` makes 0700 ones) or too deep for a Unix socket
# path (< 108 bytes) moves the cluster to a postgres-owned place named after the stack dir.
pg_home_reachable() {
  [[ $EUID -ne 0 ]] && return 0
  runuser -u postgres -- test -x "$(dirname "$PDA_STACK_DIR")" 2>/dev/null &&
    ((${#PG_HOME} < 90))
}
if [[ -z "${PDA_PG_HOME:-}" ]] && ! pg_home_reachable; then
  PG_HOME="/var/lib/postgresql/pda-stack/$(printf '%s' "$PDA_STACK_DIR" | cksum | cut -d' ' -f1)"
  PG_LOG="$PG_HOME/postgres.log"
fi
PG_DATA="$PG_HOME/data"
PG_SOCKET_DIR="$PG_HOME/run"

# Root cannot run postgres: the cluster belongs to the `postgres` OS user then; anyone else owns it.
# Runs from / (the postgres user may not enter the checkout) and without fd 9, stack.sh's lock:
# a server started here must not hold that lock for its whole life.
pg_as_owner() {
  if [[ $EUID -eq 0 ]]; then
    (cd / && runuser -u postgres -- "$@" 9>&-)
  else
    "$@" 9>&-
  fi
}

ensure_postgres_installed() {
  [[ -x "$PDA_PG_BINDIR/pg_ctl" ]] && return 0
  [[ $EUID -eq 0 ]] || die "PostgreSQL $PDA_PG_MAJOR not found in $PDA_PG_BINDIR (install postgresql-$PDA_PG_MAJOR as root, or set PDA_PG_BINDIR)"
  log "installing postgresql-$PDA_PG_MAJOR from Debian packages"
  # No system cluster on port 5432: this stack runs its own.
  if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
    mkdir -p /etc/postgresql-common
    echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
  fi
  mkdir -p "$LOG_DIR"
  # --no-upgrade: never swap the binaries of a PostgreSQL that other clusters are running from
  # (a server whose libraries change under it fails to load plpgsql until restarted).
  {
    apt-get update &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade -o Dpkg::Options::=--force-confold \
        "postgresql-$PDA_PG_MAJOR" postgresql-client-"$PDA_PG_MAJOR"
  } >>"$LOG_DIR/apt.log" 2>&1 || die "PostgreSQL $PDA_PG_MAJOR is not installable (apt-get install postgresql-$PDA_PG_MAJOR failed; see $LOG_DIR/apt.log)"
  [[ -x "$PDA_PG_BINDIR/pg_ctl" ]] || die "postgresql-$PDA_PG_MAJOR installed but $PDA_PG_BINDIR/pg_ctl is missing"
}

pg_running() { [[ -f "$PG_DATA/PG_VERSION" ]] && pg_as_owner "$PDA_PG_BINDIR/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }

pg_ready() { "$PDA_PG_BINDIR/pg_isready" -q -h "$PDA_PG_HOST" -p "$PDA_PG_PORT" -d postgres; }

# Superuser session over the private socket (trust on a 0700 socket dir: only its OS owner gets in).
pg_psql_super() {
  pg_as_owner "$PDA_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -p "$PDA_PG_PORT" -U postgres "$@"
}

pg_psql_owner() {
  pg_as_owner "$PDA_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -p "$PDA_PG_PORT" \
    -U "$PDA_PG_USER" -d "$PDA_PG_DATABASE" "$@"
}

pg_init_cluster() {
  [[ -f "$PG_DATA/PG_VERSION" ]] && return 0
  log "creating PostgreSQL cluster in $PG_DATA"
  mkdir -p "$PG_HOME" "$LOG_DIR"
  [[ $EUID -eq 0 ]] && chown postgres: "$PG_HOME"
  [[ "$PG_LOG" == "$LOG_DIR/"* ]] || ln -sfn "$PG_LOG" "$LOG_DIR/postgres.log" # for `stack.sh logs`
  pg_as_owner "$PDA_PG_BINDIR/initdb" -D "$PG_DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >>"$PG_LOG.init" 2>&1 ||
    die "initdb failed; see $PG_LOG.init"
  echo "include_if_exists = 'pda-stack.conf'" | pg_as_owner tee -a "$PG_DATA/postgresql.conf" >/dev/null
}

# Rewritten on every start so a changed PDA_PG_PORT takes effect.
pg_write_config() {
  pg_as_owner tee "$PG_DATA/pda-stack.conf" >/dev/null <<EOF
# Written by dev-world/stack/lib/postgres.sh on every start; edits are lost.
listen_addresses = '$PDA_PG_HOST'
port = $PDA_PG_PORT
unix_socket_directories = '$PG_SOCKET_DIR'
unix_socket_permissions = 0700
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
# A slot whose connector is gone must not fill the disk: PostgreSQL invalidates it past this size.
max_slot_wal_keep_size = '2GB'
password_encryption = 'scram-sha-256'
log_min_messages = warning
EOF
}

pg_start() {
  ensure_postgres_installed
  pg_init_cluster
  if pg_running; then
    wait_until "$PDA_STACK_TIMEOUT" "postgres ready" pg_ready || die "PostgreSQL runs but does not answer on port $PDA_PG_PORT; see $PG_LOG"
    return 0
  fi
  require_free_port "$PDA_PG_PORT" PDA_PG_PORT
  mkdir -p "$PG_SOCKET_DIR" "$LOG_DIR"
  touch "$PG_LOG"
  if [[ $EUID -eq 0 ]]; then chown postgres: "$PG_SOCKET_DIR" "$PG_LOG"; fi
  chmod 0700 "$PG_SOCKET_DIR"
  (( ${#PG_SOCKET_DIR} < 100 )) || die "socket path $PG_SOCKET_DIR is too long for PostgreSQL; use a shorter PDA_STACK_DIR"
  pg_write_config
  log "starting PostgreSQL $PDA_PG_MAJOR on $PDA_PG_HOST:$PDA_PG_PORT"
  # -w waits until the server accepts connections (pg_ctl polls; no fixed sleep).
  pg_as_owner "$PDA_PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$PDA_STACK_TIMEOUT" start >/dev/null ||
    die "PostgreSQL did not start; see $PG_LOG"
  wait_until "$PDA_STACK_TIMEOUT" "postgres ready" pg_ready || die "PostgreSQL does not answer on port $PDA_PG_PORT; see $PG_LOG"
}

# Idempotent: roles, database, schema, publication. Cheap enough to run on every `up`. The
# publication holds $CAPTURED_TABLES (lib/common.sh: the table registry's list).
# dev-world/db/schema.sql is idempotent, but its DDL (DROP/CREATE TRIGGER) takes exclusive locks: applied
# again by a `stack.sh up` while writers run (the fault campaign brings a killed component back that
# way), it can deadlock with them. So it is applied only when the database does not hold this exact
# file yet: its sha256 is recorded as the database's comment.
pg_apply_schema() {
  local file="$REPO_ROOT/dev-world/db/schema.sql" marker applied
  marker="dev-world/db/schema.sql sha256=$(sha256sum "$file" | cut -c1-64)"
  applied="$(pg_psql_owner -At -c "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = current_database()" 2>/dev/null || true)"
  [[ "$applied" == "$marker" ]] && return 0
  pg_psql_owner <"$file" >>"$PG_LOG.provision" 2>&1 || die "applying dev-world/db/schema.sql failed; see $PG_LOG.provision"
  pg_psql_owner -v dbname="$PDA_PG_DATABASE" -v marker="$marker" >>"$PG_LOG.provision" 2>&1 <<'SQL' ||
COMMENT ON DATABASE :"dbname" IS :'marker';
SQL
    die "recording the applied schema failed; see $PG_LOG.provision"
}

pg_provision() {
  # The passwords through psql's environment (roles.sql's \getenv): its command line shows in `ps`.
  PDA_PG_PASSWORD="$PDA_PG_PASSWORD" PDA_DEBEZIUM_PASSWORD="$PDA_DEBEZIUM_PASSWORD" pg_psql_super -d postgres \
    -v app_user="$PDA_PG_USER" -v cdc_user="$PDA_DEBEZIUM_USER" -v dbname="$PDA_PG_DATABASE" \
    <"$STACK_HOME/sql/roles.sql" >>"$PG_LOG.provision" 2>&1 || die "creating roles/database failed; see $PG_LOG.provision"
  pg_apply_schema
  [[ -n "$CAPTURED_TABLES" ]] || die "pg_provision: the captured tables are not loaded (load_captured_tables)"
  local out
  out="$(pg_psql_owner -v cdc_user="$PDA_DEBEZIUM_USER" -v captured_tables="$CAPTURED_TABLES" \
    <"$STACK_HOME/sql/publication.sql" 2>&1)" || {
    printf '%s\n' "$out" >>"$PG_LOG.provision"
    die "creating publication pda_publication failed: $(printf '%s\n' "$out" | grep -m 1 -i 'error' || echo "see $PG_LOG.provision")"
  }
  [[ -z "$out" ]] || printf '%s\n' "$out" >>"$PG_LOG.provision"
}

# A second operational database beside $PDA_PG_DATABASE, provisioned as the stack's own (roles,
# schema, publication): the pipeline benchmark seeds it and points a private connector at it, so its
# millions of rows never reach the stack's topics or its connector's slot.
pg_database_name_ok() {
  [[ "$1" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "database name '$1': lower-case letters, digits and _ only (at most 63)"
  [[ "$1" != "$PDA_PG_DATABASE" && "$1" != postgres && "$1" != template0 && "$1" != template1 ]] ||
    die "database '$1' is not a second database: refusing"
}

pg_database_create() {
  pg_database_name_ok "$1"
  pg_running || die "PostgreSQL is not running: stack.sh up first"
  load_captured_tables
  PDA_PG_DATABASE="$1" pg_provision
  if data_partitioned; then
    PDA_PG_DATABASE="$1" pg_partitioned_identity
    log "database $1 ready (schema, publication pda_publication, replica identity (company_id, id) for $PDA_DATA_PARTITIONS data partitions)"
  else
    log "database $1 ready (schema and publication pda_publication)"
  fi
}

# With PDA_DATA_PARTITIONS > 1: dev-world/db/partitioned-identity.sql (a unique (company_id, id) index per
# tenant table as its replica identity, so deletes carry their company). Idempotent; on a database
# that has it already it only reads the catalog.
pg_partitioned_identity() {
  local out
  out="$(pg_psql_owner -f - <"$PARTITIONED_IDENTITY_SQL" 2>&1)" || {
    printf '%s\n' "$out" >>"$PG_LOG.provision"
    die "applying dev-world/db/partitioned-identity.sql failed: $(printf '%s\n' "$out" | grep -m 1 -i 'error' || echo "see $PG_LOG.provision")"
  }
  [[ -z "$out" ]] || printf '%s\n' "$out" >>"$PG_LOG.provision"
}

# Its replication slots first (a slot pins WAL for the whole cluster), then the database itself.
pg_database_drop() {
  pg_database_name_ok "$1"
  pg_running || die "PostgreSQL is not running"
  pg_drop_slots "$1"
  pg_psql_super -d postgres -v dbname="$1" >>"$PG_LOG.provision" 2>&1 <<'SQL' || die "dropping database $1 failed; see $PG_LOG.provision"
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'dbname') \gexec
SQL
  log "database $1 dropped"
}

# Every slot of this private cluster is ours (the connector's or a test's): drop them all so none
# pins WAL while the stack is down, or (with a database name) those of that database only. Active
# ones are disconnected first (Connect should be stopped; a connector still running reconnects, so
# each is terminated until released, at most ~10 s).
pg_drop_slots() {
  pg_running || return 0
  local out
  out="$(pg_psql_super -d postgres -v only_database="${1:-}" 2>&1 <<'SQL'
SET pda.only_database = :'only_database';
DO $$
DECLARE s record;
BEGIN
  FOR s IN SELECT slot_name FROM pg_replication_slots
    WHERE current_setting('pda.only_database') = '' OR database = current_setting('pda.only_database') LOOP
    -- pg_terminate_backend only signals: poll until the slot is released, at most ~10 s.
    FOR i IN 1..100 LOOP
      PERFORM pg_terminate_backend(active_pid) FROM pg_replication_slots
        WHERE slot_name = s.slot_name AND active_pid IS NOT NULL;
      EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = s.slot_name AND active);
      PERFORM pg_sleep(0.1);
    END LOOP;
    PERFORM pg_drop_replication_slot(s.slot_name);
    RAISE NOTICE 'dropped replication slot %', s.slot_name;
  END LOOP;
END $$;
SQL
)" || log "warning: could not drop replication slots: $out"
  [[ -n "$out" ]] && log "${out//NOTICE:  /}"
  return 0
}

pg_stop() {
  pg_running || return 0
  pg_drop_slots
  log "stopping PostgreSQL"
  pg_as_owner "$PDA_PG_BINDIR/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null || die "PostgreSQL did not stop; see $PG_LOG"
}

pg_status() {
  if pg_running && pg_ready; then
    echo "postgres   running  $PDA_PG_HOST:$PDA_PG_PORT  data=$PG_DATA"
    pg_psql_super -d postgres -At -F ' ' -c \
      "SELECT 'slot       ' || slot_name || ' active=' || active || ' restart_lsn=' || coalesce(restart_lsn::text, '-') ||
              ' retained=' || coalesce(pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)), '-')
         FROM pg_replication_slots" 2>/dev/null || true
  else
    echo "postgres   stopped"
  fi
}
