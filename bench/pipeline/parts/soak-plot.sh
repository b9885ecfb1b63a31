#!/usr/bin/env bash
# The soak's plot (bench/pipeline/soak.ts): the pinned matplotlib (installed once, from PyPI, by
# scripts/lib/matplotlib.sh) runs soak-plot.py on a samples JSON.
#   bash bench/pipeline/parts/soak-plot.sh <samples.json> <out.png>
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../../scripts/lib/matplotlib.sh
source "$here/../../../scripts/lib/matplotlib.sh"
python="$(ensure_matplotlib)"
exec "$python" "$here/soak-plot.py" "$@"
