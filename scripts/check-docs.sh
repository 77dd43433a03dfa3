#!/usr/bin/env bash
# docs/counters.md is generated from the stage registry: fail when it is stale.
set -euo pipefail
PIPEFWD=${1:-build/app/pipefwd}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if ! "$PIPEFWD" --counters | diff -u "$ROOT/docs/counters.md" -; then
	echo "docs/counters.md is stale: run $PIPEFWD --counters > docs/counters.md"
	exit 1
fi
echo "docs/counters.md matches the stage registry"
