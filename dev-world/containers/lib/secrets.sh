# shellcheck shell=bash
# The secrets of docker-compose.yml, which has no default for any of them (`${VAR:?}`): compose.sh
# takes them from an env file, $PDA_COMPOSE_ENV_FILE (default <repo>/.env, git-ignored). `up`
# writes that file when it is missing: random values from /dev/urandom, mode 0600, never
# overwritten afterwards. Plain NAME=value lines; the file's values win over the environment's.
# Sourced after lib/common.sh (containers_log, containers_die, REPO_ROOT).

COMPOSE_SECRETS=(API_CURSOR_SECRET PDA_PG_PASSWORD PDA_DEBEZIUM_PASSWORD PDA_REGISTRY_DB_PASSWORD)
COMPOSE_ENV_FILE="${PDA_COMPOSE_ENV_FILE:-$REPO_ROOT/.env}"

# 32 random bytes as 64 hex characters (also long enough for API_CURSOR_SECRET's 32).
random_secret() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }

# Writes the env file when it is missing; checks it otherwise (every secret set, mode 0600 or 0400).
ensure_env_file() {
  local name mode missing=()
  if [[ -f "$COMPOSE_ENV_FILE" ]]; then
    for name in "${COMPOSE_SECRETS[@]}"; do
      grep -q "^$name=." "$COMPOSE_ENV_FILE" || missing+=("$name")
    done
    ((${#missing[@]} == 0)) ||
      containers_die "$COMPOSE_ENV_FILE has no ${missing[*]}: add it (NAME=value), or remove the file and 'up' writes a new one"
    mode="$(stat -c %a "$COMPOSE_ENV_FILE")"
    [[ "$mode" == 600 || "$mode" == 400 ]] ||
      containers_log "warning: $COMPOSE_ENV_FILE holds passwords and has mode $mode: chmod 600 it"
    return 0
  fi
  # PostgreSQL keeps the passwords its volume was made with: new ones would lock everyone out.
  if docker volume inspect "${COMPOSE_PROJECT_NAME}_pgdata" >/dev/null 2>&1; then
    containers_die "volume ${COMPOSE_PROJECT_NAME}_pgdata holds a database made with the passwords of a missing $COMPOSE_ENV_FILE: 'bash dev-world/containers/compose.sh down' removes it (and its data), then 'up'"
  fi
  (
    umask 077
    set -o noclobber # never over a file that appeared meanwhile
    {
      echo "# Written by dev-world/containers/compose.sh up: the demo's secrets for docker-compose.yml (random;"
      echo "# keep this file private). PostgreSQL keeps its passwords in its volume: remove this file"
      echo "# only together with the volumes ('compose.sh down')."
      for name in "${COMPOSE_SECRETS[@]}"; do printf '%s=%s\n' "$name" "$(random_secret)"; done
    } >"$COMPOSE_ENV_FILE"
  ) || containers_die "could not write $COMPOSE_ENV_FILE"
  containers_log "wrote random secrets for the demo to $COMPOSE_ENV_FILE (mode 0600, git-ignored; reused by later runs, never overwritten)"
}

# Exports the env file's NAME=value lines (comments and blank lines skipped). A missing file exports
# nothing: compose then names the variable it lacks.
load_env_file() {
  local line
  [[ -f "$COMPOSE_ENV_FILE" ]] || return 0
  while IFS= read -r line || [[ -n "$line" ]]; do
    [[ "$line" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
    export "${BASH_REMATCH[1]}=${BASH_REMATCH[2]}"
  done <"$COMPOSE_ENV_FILE"
}

# `down` needs no secret, but compose checks every ${VAR:?} of the file before it does anything.
placeholder_secrets() {
  local name
  for name in "${COMPOSE_SECRETS[@]}"; do
    printenv "$name" >/dev/null || export "$name=unused-by-down"
  done
}
