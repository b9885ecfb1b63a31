# shellcheck shell=bash
# Sourced by scripts/contract-checks.sh: a virtualenv with the pinned Schemathesis under .venv/,
# created once and reused (idempotent: a second call with the right version installed is instant).

SCHEMATHESIS_VERSION=4.32.5

# ensure_schemathesis <repo root> → prints the path of the `st` executable.
ensure_schemathesis() {
  local venv="$1/.venv/schemathesis-$SCHEMATHESIS_VERSION"
  local st="$venv/bin/st"
  if [ -x "$st" ] && "$st" --version 2>/dev/null | grep -qF "$SCHEMATHESIS_VERSION"; then
    echo "$st"
    return 0
  fi
  if ! command -v python3 >/dev/null; then
    echo "contract-checks: python3 is required for Schemathesis (Debian: apt-get install python3 python3-venv)" >&2
    return 1
  fi
  # Debian's python3 ships without ensurepip until python3-venv is installed.
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "contract-checks: installing python3-venv" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade python3-venv >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade python3-venv >/dev/null 2>&1; } || {
        echo "contract-checks: could not install python3-venv" >&2
        return 1
      }
    else
      echo "contract-checks: python3 has no venv module (Debian: apt-get install python3-venv)" >&2
      return 1
    fi
  fi
  echo "contract-checks: installing schemathesis==$SCHEMATHESIS_VERSION into $venv" >&2
  rm -rf "$venv"
  local log
  log=$(mktemp)
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "schemathesis==$SCHEMATHESIS_VERSION"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "contract-checks: could not install schemathesis==$SCHEMATHESIS_VERSION from PyPI" >&2
    rm -rf "$venv"
    return 1
  fi
  rm -f "$log"
  echo "$st"
}

# plain_banners: stdin → stdout with Schemathesis's pytest-style banners ("=== SUMMARY ===",
# "=== 1 warning in 33.93s ===") made plain text. CI reads the run's closing lines, and a banner
# without a test count there was read as a run of no test; the run's own count is the closing
# 'tests: …' line of scripts/test.sh.
plain_banners() {
  sed -E -e 's/^=+ *(.*[^ =]) *=+ *$/schemathesis: \1/' -e 's/^(schemathesis: .*) in ([0-9.]+s)$/\1 (took \2)/' -e '/^=+ *$/d'
}
