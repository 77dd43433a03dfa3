#!/usr/bin/env bash
# `make run`: replay the bundled sample through conf/default.yaml and show what happened.
set -euo pipefail
BUILD=${1:-build}
HUGE=${2:-}
TOPO=${TOPO:-conf/default.yaml}
if [ "$HUGE" = --huge ]; then
	# runtime.hugepages: auto takes them when free pages sit on a mounted hugetlbfs.
	free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
	if [ "${free:-0}" -eq 0 ] || ! grep -q ' hugetlbfs ' /proc/mounts; then
		echo "make run HUGE=1: no free hugepages on a mounted hugetlbfs (HugePages_Free: ${free:-0})." >&2
		echo "Reserve some first (root), e.g. 256 x 2 MB, and release them after:" >&2
		echo "  echo 256 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages" >&2
		echo "  mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages" >&2
		exit 1
	fi
	echo "== hugepages: $free free of $(awk '/^Hugepagesize:/ {print $2 $3}' /proc/meminfo)"
fi
mkdir -p "$BUILD/run"
echo "== pipefwd --check $TOPO"
"$BUILD/app/pipefwd" --check "$TOPO"
echo
echo "== pipefwd $TOPO (stops when the sample is replayed)"
PREFIX="pipefwd-run-$$"
# EAL leaves its runtime dir (sockets, config) behind: remove this run's on any exit.
if [ "$(id -u)" -eq 0 ]; then RUNDIR=/var/run/dpdk/$PREFIX; else RUNDIR=${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX; fi
# Hugepage-backed runs leave <prefix>map_* files on the hugetlbfs (they hold the pages).
trap 'rm -rf "$RUNDIR"; for d in $(awk "\$3 == \"hugetlbfs\" {print \$2}" /proc/mounts); do rm -f "$d/${PREFIX}map_"*; done' EXIT
"$BUILD/app/pipefwd" --idle-exit 500 --stats-json "$BUILD/run/stats.json" "$TOPO" -- \
	--file-prefix="$PREFIX"
echo
for f in "$BUILD"/run/*.pcap; do
	n=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, 'scripts'); import replaylib; print(len(replaylib.read_pcap('$f')))")
	echo "wrote $f: $n frames"
done
echo "counters as JSON: $BUILD/run/stats.json"
