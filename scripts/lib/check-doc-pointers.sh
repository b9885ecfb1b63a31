#!/usr/bin/env bash
# Comments and docs point only at files inside this repository (docs/architecture.md, a decision
# record in docs/decisions/, docs/public-data-api-v1.md, a package README): someone who clones the
# repository alone must be able to follow every pointer. Fails with one line per offending
# file:line when a tracked source, script, SQL, YAML, JSON or Markdown file mentions a design brief,
# notes or issue numbers kept elsewhere. Dated benchmark reports (bench/results/) are history and
# may keep what they said at the time. Also checks that relative Markdown links resolve
# (check-doc-links.mjs). Run by scripts/test.sh with the lint step.
set -euo pipefail
cd "$(dirname "$0")/../.."

# `../shared` outside the repository, not bench/'s own shared/ folder: an import specifier
# ('../shared/x.ts', '../../shared/x.ts') is preceded by a quote or a slash.
pattern="DESIGN\\.md|notes/|(^|[^./'])\\.\\./shared|issue #"
hits=$(git grep -n -I -E "$pattern" -- \
  '*.ts' '*.mjs' '*.js' '*.sh' '*.sql' '*.yaml' '*.yml' '*.json' '*.py' '*.md' \
  ':!bench/results/' ':!scripts/lib/check-doc-pointers.sh' || true)

if [ -n "$hits" ]; then
  while IFS= read -r hit; do
    location=${hit%%:*}
    rest=${hit#*:}
    echo "$location:${rest%%:*}: points outside the repository: ${rest#*:}" >&2
  done <<<"$hits"
  echo "check-doc-pointers: point at docs/ or a package README instead (docs/README.md)" >&2
  exit 1
fi

# And the Markdown links between those files must resolve (files and heading anchors).
git ls-files -z -- '*.md' ':!bench/results/' | xargs -0 node scripts/lib/check-doc-links.mjs
