#!/usr/bin/env bash
# Run every test suite through meson and end with one "N passed, N failed" line.
#   scripts/run-tests.sh BUILD [meson test args]
# With ASAN_BUILD set (make test sets it to BUILD-asan), the unit, replay, reload, stats,
# capture, fault and fuzz suites run again on that sanitizer build (but the tests also in
# suite release_only): any ASan/UBSan/LSan report aborts the process under test and
# fails it (suppressions: test/asan.supp, DPDK/EAL internals only).
set -uo pipefail
BUILD=${1:-build}
shift || true
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ok=0 fail=0 skip=0 rc=0

# Add one meson log's Ok/Fail/Timeout/Skipped lines to the totals.
tally() {
	ok=$(( ok + $(awk '/^Ok:/ {print $2}' "$1" | tail -1) + 0 ))
	fail=$(( fail + $(awk '/^Fail:/ {print $2}' "$1" | tail -1) + $(awk '/^Timeout:/ {print $2}' "$1" | tail -1) + 0 ))
	skip=$(( skip + $(awk '/^Skipped:/ {print $2}' "$1" | tail -1) + 0 ))
}

run() {
	local log
	log=$(mktemp)
	meson test "$@" 2>&1 | tee "$log"
	local r=${PIPESTATUS[0]}
	[ "$r" -ne 0 ] && rc=$r
	tally "$log"
	rm -f "$log"
}

# A suite run in the background (PID, its LOG): wait, print, count.
collect() {
	wait "$1"
	local r=$?
	echo "== $3 =="
	cat "$2"
	[ "$r" -ne 0 ] && rc=$r
	tally "$2"
	rm -f "$2"
}

# unit, replay and fuzz tests are self-contained (own prefixes, own temp dirs, lossless
# replay): two at a time. The other suites run two at a time too, but meson runs each
# test marked is_parallel: false (the ones that time reloads, rebalances, latency and
# live traffic) alone.
PARALLEL=(--suite unit --suite replay --suite fuzz)
SERIAL=(--no-suite unit --no-suite replay --no-suite fuzz)
perf_pid=
t0=$SECONDS
asan_build_pid=
if [ -n "${ASAN_BUILD:-}" ]; then
	# Compile the sanitizer build at the lowest priority beside the release
	# build's suites, which mostly wait on traffic and the clock: it takes
	# their idle CPU, not theirs.
	asan_build_log=$(mktemp)
	nice -n 19 ninja -C "$ASAN_BUILD" > "$asan_build_log" 2>&1 &
	asan_build_pid=$!
fi
if [ $# -eq 0 ] && [ -n "${ASAN_BUILD:-}" ]; then
	# The instruction gate counts instructions under callgrind: the machine's
	# load does not change its figure, so it runs beside every other suite.
	perf_log=$(mktemp)
	meson test -C "$BUILD" --no-rebuild --logbase perflog --print-errorlogs --num-processes 1 \
		--suite perf \
		> "$perf_log" 2>&1 &
	perf_pid=$!
	SERIAL+=(--no-suite perf)
fi
# The tests run pipefwd as it ships, polling (runtime.idle_sleep_us 0);
# stats_idle_sleep tests the sleep itself (docs/topology.md, "Idle sleep").
netns_pid=
if [ $# -eq 0 ]; then
	run -C "$BUILD" --print-errorlogs --num-processes 2 "${PARALLEL[@]}"
	# With a sanitizer build, netns and soak run beside its suites (below).
	[ -n "${ASAN_BUILD:-}" ] && SERIAL+=(--no-suite netns --no-suite soak)
	run -C "$BUILD" --print-errorlogs --num-processes 2 "${SERIAL[@]}"
else
	run -C "$BUILD" --print-errorlogs --num-processes 1 "$@"
fi
if [ -n "${ASAN_BUILD:-}" ]; then
	if [ $# -eq 0 ]; then
		# Real hosts and routing daemons in network namespaces (netns) and the
		# soak wait mostly on hosts, protocol timers and the clock: they run
		# (release build, one at a time) beside the sanitizer build's suites,
		# which keeps make test inside CI's 15 minutes.
		netns_log=$(mktemp)
		meson test -C "$BUILD" --no-rebuild --logbase netnslog --print-errorlogs \
			--num-processes 1 --suite netns --suite soak > "$netns_log" 2>&1 &
		netns_pid=$!
	fi
	echo "== release build's suites took $(( SECONDS - t0 )) s"
	if ! wait "$asan_build_pid"; then
		cat "$asan_build_log"
		echo "the sanitizer build $ASAN_BUILD failed"
		rm -f "$asan_build_log"
		exit 1
	fi
	tail -1 "$asan_build_log"
	rm -f "$asan_build_log"
	echo "== sanitizer build $ASAN_BUILD: unit, replay, reload, stats, capture, fault, fuzz =="
	export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:suppressions=$ROOT/test/asan.supp"
	export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
	if [ $# -eq 0 ]; then
		run -C "$ASAN_BUILD" --print-errorlogs --num-processes 2 --timeout-multiplier 3 \
			"${PARALLEL[@]}"
		# release_only: the move, rebalance and abusive-client tests: long runs of
		# code the other reload/stats tests already take through the sanitizers.
		run -C "$ASAN_BUILD" --print-errorlogs --num-processes 2 --timeout-multiplier 3 \
			--suite reload --suite stats --suite capture --suite fault --no-suite release_only
	else
		run -C "$ASAN_BUILD" --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
			--suite unit --suite replay --suite reload --suite stats --suite capture \
			--suite fault --suite fuzz "$@"
	fi
	unset ASAN_OPTIONS UBSAN_OPTIONS
fi
[ -n "$netns_pid" ] && collect "$netns_pid" "$netns_log" "netns and soak suites (ran beside the sanitizer build's)"
[ -n "$perf_pid" ] && collect "$perf_pid" "$perf_log" "perf suite (ran beside the others)"
echo "all suites took $(( SECONDS - t0 )) s"
# The last line is the plain summary CI reads.
echo "tests: $ok passed, $fail failed, $skip skipped"
exit $rc
