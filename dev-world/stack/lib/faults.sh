# shellcheck shell=bash
# One component of the stack stopped the way a fault stops it, for the fault campaign
# (docs/resilience.md): `stack.sh stop <component> [--kill|--fast|--immediate]`, and
# `stack.sh restart …` = that stop, then `up` (which starts whatever is down, and restarts a FAILED
# connector once). Nothing else is touched: the replication slot, the topics, the connector's
# stored offsets all stay, so what comes back is what a crashed or restarted machine would see.

# SIGKILL one of our JVMs (no shutdown hook: no offsets flushed, no clean leave of its group).
kill_component() {
  local name="$1" pid
  pid="$(running_pid "$name")" || die "$name is not running (nothing to kill)"
  log "killing $name (pid $pid) with SIGKILL"
  kill -KILL "$pid"
  wait_until 30 "$name killed" not_alive "$pid" || die "$name (pid $pid) still alive 30 s after SIGKILL"
  rm -f "$(pid_file "$name")"
}

# pg_ctl stop in a shutdown mode, keeping the replication slots (stack.sh's own pg_stop drops them
# first, which is right for `down` and wrong here: a dropped slot loses the connector's position).
# fast: disconnect sessions, checkpoint, exit. immediate: exit at once; crash recovery on start.
pg_stop_mode() {
  local mode="$1"
  pg_running || die "PostgreSQL is not running (nothing to stop)"
  log "stopping PostgreSQL (-m $mode, replication slots kept)"
  pg_as_owner "$PDA_PG_BINDIR/pg_ctl" -D "$PG_DATA" -m "$mode" -w -t 60 stop >/dev/null ||
    die "PostgreSQL did not stop (-m $mode); see $PG_LOG"
}

component_stop() {
  local component="${1:-}" mode="${2:-}"
  case "$component:$mode" in
  kafka: | connect: | registry:) stop_pid "$component" 90 ;;
  kafka:--kill | connect:--kill | registry:--kill) kill_component "$component" ;;
  postgres: | postgres:--fast) pg_stop_mode fast ;;
  postgres:--immediate) pg_stop_mode immediate ;;
  *) die "usage: stack.sh stop|restart kafka|connect|registry [--kill] | postgres [--fast|--immediate]" ;;
  esac
}
