#!/usr/bin/env bash
# Writes the api's build stamp (served by GET /v1/version) from the git checkout it runs in.
# Usage: api/scripts/stamp-version.sh [output-file]   (default: api/build-info.json)
# deployed_at is human-readable text on purpose (docs/public-data-api-v1.md, "Version stamp": not ISO 8601).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-"$here/../build-info.json"}
repo=$(git -C "$here" rev-parse --show-toplevel)

commit=$(git -C "$repo" rev-parse HEAD)
branch=$(git -C "$repo" rev-parse --abbrev-ref HEAD)
[ "$branch" = "HEAD" ] && branch=""            # detached checkout: no branch
tag=$(git -C "$repo" describe --tags --exact-match 2>/dev/null || true)
deployed_at=$(LC_ALL=C date -u '+%a %d %b %Y %H:%M:%S UTC')

json_string() { # prints a JSON string or null
  if [ -z "$1" ]; then printf 'null'; else printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; fi
}
tmp="$out.tmp.$$"
{
  printf '{\n'
  printf '  "commit_hash": %s,\n' "$(json_string "$commit")"
  printf '  "branch": %s,\n' "$(json_string "$branch")"
  printf '  "tag": %s,\n' "$(json_string "$tag")"
  printf '  "deployed_at": %s\n' "$(json_string "$deployed_at")"
  printf '}\n'
} >"$tmp"
mv "$tmp" "$out"
echo "stamped $out ($commit${tag:+, tag $tag})"
