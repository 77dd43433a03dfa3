#!/usr/bin/env bash
# Build the libFuzzer targets with clang (ASan+UBSan) and run each for a bounded time.
#   scripts/fuzz.sh [BUILD_DIR]     FUZZ_SECONDS (default 60) per target, FUZZ_TARGETS to choose.
# Seeds: the replay corpus frames and every topology/fixture (test/fuzz/seeds.py); the
# growing corpus stays in BUILD_DIR/fuzz-corpus. A crasher is written straight into
# test/fuzz/regression/<target>/ (commit it: `make test` replays it from then on).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build-fuzz}
SECS=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-fuzz_l2fib fuzz_rx fuzz_tables fuzz_topology}

# clang and its libFuzzer runtime are only needed here, not for the default build.
missing=()
for p in clang libclang-rt-14-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
	echo "fuzz: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" || exit 1
fi
if [ ! -f "$B/build.ninja" ]; then
	CC=clang meson setup "$B" "$ROOT" -Dsanitizers=true -Dwerror=false \
		-Dbuildtype=debugoptimized -Dc_args=-fsanitize=fuzzer-no-link >/dev/null || exit 1
fi
ninja -C "$B" $(for t in $TARGETS; do echo "test/fuzz/$t"; done) || exit 1
/usr/bin/python3 "$ROOT/test/fuzz/seeds.py" "$B/fuzz-seeds" || exit 1

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:suppressions=$ROOT/test/asan.supp}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}"
failed=()
for t in $TARGETS; do
	case $t in
	fuzz_rx) maxlen=9100 ;;
	*) maxlen=8192 ;;
	esac
	corpus="$B/fuzz-corpus/$t"
	reg="$ROOT/test/fuzz/regression/$t"
	mkdir -p "$corpus" "$reg"
	log="$B/$t.log"
	echo "fuzz: $t for ${SECS}s (log $log)"
	"$B/test/fuzz/$t" -max_total_time="$SECS" -max_len="$maxlen" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$reg/" \
		"$corpus" "$B/fuzz-seeds/$t" "$reg" >"$log" 2>&1
	rc=$?
	execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	echo "fuzz: $t: rc $rc, ${execs:-?} executions, $cov, corpus $(ls "$corpus" | wc -l) inputs"
	[ $rc -ne 0 ] && failed+=("$t") && grep -E 'ERROR|invariant|SUMMARY|Test unit written' "$log" | head -20
done
if [ ${#failed[@]} -ne 0 ]; then
	echo "fuzz: FAILED: ${failed[*]}; crashers are in test/fuzz/regression/<target>/ (commit them, fix, re-run)"
	exit 1
fi
echo "fuzz: no crash in ${SECS}s per target"
