#!/usr/bin/env bash
# Run every test suite through meson and end with one "N passed, N failed" line.
set -uo pipefail
BUILD=${1:-build}
shift || true
log=$(mktemp)
meson test -C "$BUILD" --print-errorlogs --num-processes 1 "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
ok=$(awk '/^Ok:/ {print $2}' "$log")
fail=$(awk '/^Fail:/ {print $2}' "$log")
to=$(awk '/^Timeout:/ {print $2}' "$log")
skip=$(awk '/^Skipped:/ {print $2}' "$log")
rm -f "$log"
echo "tests: ${ok:-0} passed, $(( ${fail:-0} + ${to:-0} )) failed, ${skip:-0} skipped"
exit $rc
