#!/usr/bin/env bash
# `make run`: replay the bundled sample through conf/default.yaml and show what happened.
set -euo pipefail
BUILD=${1:-build}
TOPO=${TOPO:-conf/default.yaml}
mkdir -p "$BUILD/run"
echo "== pipefwd --check $TOPO"
"$BUILD/app/pipefwd" --check "$TOPO"
echo
echo "== pipefwd $TOPO (stops when the sample is replayed)"
PREFIX="pipefwd-run-$$"
# EAL leaves its runtime dir (sockets, config) behind: remove this run's on any exit.
if [ "$(id -u)" -eq 0 ]; then RUNDIR=/var/run/dpdk/$PREFIX; else RUNDIR=${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX; fi
trap 'rm -rf "$RUNDIR"' EXIT
"$BUILD/app/pipefwd" --idle-exit 500 --stats-json "$BUILD/run/stats.json" "$TOPO" -- \
	--file-prefix="$PREFIX"
echo
for f in "$BUILD"/run/*.pcap; do
	n=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, 'scripts'); import replaylib; print(len(replaylib.read_pcap('$f')))")
	echo "wrote $f: $n frames"
done
echo "counters as JSON: $BUILD/run/stats.json"
