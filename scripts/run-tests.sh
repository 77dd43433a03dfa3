#!/usr/bin/env bash
# Run every test suite through meson and end with one "N passed, N failed" line.
#   scripts/run-tests.sh BUILD [meson test args]
# With ASAN_BUILD set (make test sets it to BUILD-asan), the unit, replay, reload, stats,
# fault and fuzz suites run again on that sanitizer build: any ASan/UBSan/LSan
# report aborts the process under test and fails it (suppressions: test/asan.supp,
# DPDK/EAL internals only).
set -uo pipefail
BUILD=${1:-build}
shift || true
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ok=0 fail=0 skip=0 rc=0

run() {
	local log
	log=$(mktemp)
	meson test "$@" 2>&1 | tee "$log"
	local r=${PIPESTATUS[0]}
	[ "$r" -ne 0 ] && rc=$r
	ok=$(( ok + $(awk '/^Ok:/ {print $2}' "$log" | tail -1) + 0 ))
	fail=$(( fail + $(awk '/^Fail:/ {print $2}' "$log" | tail -1) + $(awk '/^Timeout:/ {print $2}' "$log" | tail -1) + 0 ))
	skip=$(( skip + $(awk '/^Skipped:/ {print $2}' "$log" | tail -1) + 0 ))
	rm -f "$log"
}

t0=$SECONDS
run -C "$BUILD" --print-errorlogs --num-processes 1 "$@"
if [ -n "${ASAN_BUILD:-}" ]; then
	echo "== sanitizer build $ASAN_BUILD: unit, replay, reload, stats, capture, fault, fuzz =="
	ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:suppressions=$ROOT/test/asan.supp" \
	UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1" \
	run -C "$ASAN_BUILD" --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
		--suite unit --suite replay --suite reload --suite stats --suite capture --suite fault \
		--suite fuzz "$@"
fi
echo "all suites took $(( SECONDS - t0 )) s"
# The last line is the plain summary CI reads.
echo "tests: $ok passed, $fail failed, $skip skipped"
exit $rc
