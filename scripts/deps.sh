#!/usr/bin/env bash
# Install the Debian packages pipefwd needs, only those missing (fast when done).
#   scripts/deps.sh [EXTRA-PACKAGE...]   (a target's own extras, e.g. dpdk-doc)
set -euo pipefail
pkgs=(gcc make pkg-config meson ninja-build dpdk dpdk-dev libdpdk-dev libyaml-dev
      libcmocka-dev libpcap-dev libsystemd-dev python3-scapy python3-ruamel.yaml python3-seccomp tcpdump tmux
      prometheus valgrind frr bird2 iproute2 iputils-ping traceroute iputils-tracepath ethtool "$@")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
