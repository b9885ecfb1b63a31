# shellcheck shell=bash
# Sourced by bench/pipeline/soak.ts's plot step (bench/pipeline/parts/soak-plot.sh): the pinned
# matplotlib from PyPI in a virtualenv under the tools cache (~/.cache/pda-tools, or
# $PDA_TOOLS_CACHE), created once and reused: a second call with the right version installed is
# instant. Only PyPI is contacted, by pip. The pattern of scripts/lib/datasette.sh.

MATPLOTLIB_VERSION=3.11.2

# ensure_matplotlib → prints the path of the virtualenv's `python` (messages go to stderr).
ensure_matplotlib() {
  local cache="${PDA_TOOLS_CACHE:-$HOME/.cache/pda-tools}"
  local venv="$cache/matplotlib-$MATPLOTLIB_VERSION"
  local python="$venv/bin/python"
  if [ -x "$python" ] && "$python" -c "import matplotlib, sys; sys.exit(matplotlib.__version__ != '$MATPLOTLIB_VERSION')" 2>/dev/null; then
    echo "$python"
    return 0
  fi
  if ! command -v python3 >/dev/null; then
    echo "matplotlib: python3 is required (Debian: apt-get install python3 python3-venv)" >&2
    return 1
  fi
  # Debian's python3 ships without ensurepip until python3-venv is installed.
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "matplotlib: installing python3-venv from Debian packages" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade python3-venv; } \
        >/dev/null 2>&1 || { echo "matplotlib: could not install python3-venv" >&2; return 1; }
    else
      echo "matplotlib: python3 has no venv module (Debian: apt-get install python3-venv)" >&2
      return 1
    fi
  fi
  echo "matplotlib: installing matplotlib==$MATPLOTLIB_VERSION from PyPI into $venv (once, ~30 s)" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  local log
  log=$(mktemp)
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "matplotlib==$MATPLOTLIB_VERSION"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "matplotlib: could not install matplotlib==$MATPLOTLIB_VERSION from PyPI" >&2
    rm -rf "$venv" "$log"
    return 1
  fi
  rm -f "$log"
  echo "$python"
}
