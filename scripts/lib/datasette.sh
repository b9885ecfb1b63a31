# shellcheck shell=bash
# Sourced by scripts/datasette.sh (and scripts/test.sh): the pinned Datasette from PyPI in a
# virtualenv under the tools cache (~/.cache/pda-tools, or $PDA_TOOLS_CACHE), created once and reused:
# a second call with the right version installed is instant. Only PyPI is contacted, by pip.

DATASETTE_VERSION=0.65.5

# ensure_datasette → prints the path of the `datasette` executable (messages go to stderr).
ensure_datasette() {
  local cache="${PDA_TOOLS_CACHE:-$HOME/.cache/pda-tools}"
  local venv="$cache/datasette-$DATASETTE_VERSION"
  local bin="$venv/bin/datasette"
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qF "$DATASETTE_VERSION"; then
    echo "$bin"
    return 0
  fi
  if ! command -v python3 >/dev/null; then
    echo "datasette: python3 is required (Debian: apt-get install python3 python3-venv)" >&2
    return 1
  fi
  # Debian's python3 ships without ensurepip until python3-venv is installed.
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "datasette: installing python3-venv from Debian packages" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade python3-venv; } \
        >/dev/null 2>&1 || { echo "datasette: could not install python3-venv" >&2; return 1; }
    else
      echo "datasette: python3 has no venv module (Debian: apt-get install python3-venv)" >&2
      return 1
    fi
  fi
  echo "datasette: installing datasette==$DATASETTE_VERSION from PyPI into $venv (once, ~30 s)" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  local log
  log=$(mktemp)
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "datasette==$DATASETTE_VERSION"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "datasette: could not install datasette==$DATASETTE_VERSION from PyPI" >&2
    rm -rf "$venv" "$log"
    return 1
  fi
  rm -f "$log"
  echo "$bin"
}
