#!/usr/bin/env bash
# `make bench [QUICK=1]`, `make bench-compare BASE=<ref>`: install what only the
# benchmarks need (idempotent), then run the harness (scripts/bench.py).
set -euo pipefail
BUILD=${1:-build}
shift || true
# openvswitch-switch-dpdk: the OVS-DPDK peer (scripts/bench_ovs.py runs a private instance).
pkgs=(dpdk-doc gnuplot-nox make openvswitch-switch-dpdk)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$BUILD" "$@"
