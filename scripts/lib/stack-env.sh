# shellcheck shell=bash
# Sourced by the top-level scripts: reads the env file of the stack that `dev-world/stack/stack.sh up`
# started, <stack dir>/env, where the stack dir is PDA_STACK_DIR or <repo>/.stack
# (dev-world/stack/README.md), the same rule stack.sh and @pda/dev-world/stack's readStackEnv follow.

stack_env_file() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  echo "${PDA_STACK_DIR:-$root/.stack}/env"
}

# Exports the stack's addresses (PDA_PG_*, PDA_KAFKA_BROKERS, …) into the calling script; a missing
# file is one line on stderr and exit 1.
source_stack_env() {
  local file
  file=$(stack_env_file)
  if [ ! -f "$file" ]; then
    echo "$(basename "$0"): $file is missing: start the stack first (bash dev-world/stack/stack.sh up)" >&2
    exit 1
  fi
  # shellcheck source=/dev/null
  source "$file"
}
