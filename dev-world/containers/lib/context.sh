# shellcheck shell=bash
# Build contexts: each infrastructure image gets a small context of its own, staged from the caches
# the native stack fills (the same pinned jars and Node), hard-linked where the filesystem allows.
# The build machine's extra CA certificates (/usr/local/share/ca-certificates/*.crt, e.g. a
# company proxy's) are staged too: the build stages that download (apt over https, pnpm) trust
# them; runtime stages never see them.

CONTEXT_ROOT="${PDA_CONTAINERS_CONTEXT_DIR:-$PDA_CACHE_DIR/container-contexts}"

# stage_context NAME: a fresh, empty context dir holding the image's own files (dev-world/containers/NAME).
stage_context() {
  local name="$1" dir="$CONTEXT_ROOT/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -R "$CONTAINERS_HOME/$name/." "$dir/"
  printf '%s\n' "$dir"
}

# stage_copy SRC DEST: hard links when possible (same filesystem), else a copy.
stage_copy() {
  mkdir -p "$(dirname "$2")"
  cp -al "$1" "$2" 2>/dev/null || cp -a "$1" "$2"
}

# The build machine's extra CAs, into DIR (always created, maybe empty).
stage_extra_ca() {
  local dir="$1"
  mkdir -p "$dir"
  local cert
  for cert in /usr/local/share/ca-certificates/*.crt; do
    [[ -f "$cert" ]] && cp "$cert" "$dir/"
  done
  return 0
}
