# shellcheck shell=bash
# A Docker engine that answers: installed from Debian's packages when missing (docker.io, Docker
# 20.10; docker-compose 1.29; debootstrap for the base image), started when it is not running
# (machines without systemd: dockerd in the background, its log in $PDA_CONTAINERS_LOG_DIR).

docker_answers() { docker info >/dev/null 2>&1; }

ensure_docker_engine() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  if ((${#missing[@]} > 0)); then
    [[ $EUID -eq 0 ]] || containers_die "missing ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root"
    containers_log "installing ${missing[*]} from Debian's packages (first run only)"
    mkdir -p "$PDA_CONTAINERS_LOG_DIR"
    {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade "${missing[@]}"
    } >>"$PDA_CONTAINERS_LOG_DIR/apt.log" 2>&1 ||
      containers_die "apt-get install ${missing[*]} failed; see $PDA_CONTAINERS_LOG_DIR/apt.log"
  fi
  docker_answers && return 0
  if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
    systemctl start docker || containers_die "systemctl start docker failed"
  else
    [[ $EUID -eq 0 ]] || containers_die "the Docker engine is not running and only root can start it here"
    mkdir -p "$PDA_CONTAINERS_LOG_DIR"
    containers_log "starting dockerd (log: $PDA_CONTAINERS_LOG_DIR/dockerd.log)"
    setsid dockerd >>"$PDA_CONTAINERS_LOG_DIR/dockerd.log" 2>&1 </dev/null &
  fi
  local deadline=$((SECONDS + 60))
  until docker_answers; do
    ((SECONDS < deadline)) || containers_die "the Docker engine did not answer within 60 s; see $PDA_CONTAINERS_LOG_DIR/dockerd.log"
    sleep 0.5
  done
}

# docker-compose v1 (Debian's) or the v2 plugin, whichever is there, as an array: "${COMPOSE[@]}".
compose_command() {
  if docker compose version >/dev/null 2>&1; then
    COMPOSE=(docker compose)
  elif command -v docker-compose >/dev/null; then
    COMPOSE=(docker-compose)
  else
    containers_die "neither 'docker compose' nor 'docker-compose' is installed"
  fi
}
