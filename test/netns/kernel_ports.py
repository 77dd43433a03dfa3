#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Kernel interfaces as ports: net_af_packet and net_af_xdp on a veth pair, left as found.

    /usr/bin/python3 test/netns/kernel_ports.py --pipefwd build/app/pipefwd

In a namespace of its own (PF_NETNS_PREFIX, default "pfkp" + 4 hex digits of
the pid) two veth pairs k0-k0p and k1-k1p; pipefwd drives k0 (port p0, with
a `mac:` of its own) and k1 (p1) and cross-connects them. k1 is made
promiscuous before pipefwd starts, k0 is not. For each driver: 64 UDP frames
built by scapy go in at k0p and must come out at k1p byte for byte (xconnect
changes nothing); then SIGINT must end pipefwd with exit 0, the accounting
exact, no mbuf in use, and both interfaces as they were found: k0 not
promiscuous and with its own MAC (net_af_packet gave it p0's while running),
k1 still promiscuous. net_af_xdp keeps its fill rings' mbufs at close
(2048 a queue in DPDK 22.11): the report counts them apart, exactly.

A driver whose port cannot be made here (no such PMD, no AF_XDP in the
kernel) is skipped; both skipped, or no root or ip: exit 77.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multiqueue import stop  # noqa: E402
from router import start_pipefwd  # noqa: E402

PFX = os.environ.get("PF_NETNS_PREFIX", "pfkp%04x" % (os.getpid() & 0xffff))
NS = PFX
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-kp")
P0_MAC = "02:00:00:00:0c:10"
N_FRAMES = 64
XDP_FILL = 2048   # DPDK 22.11 net_af_xdp: mbufs in an rx queue's fill ring

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "{drv}0,iface=k0", mac: "{mac}" }}
  p1: {{ device: "{drv}1,iface=k1" }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: xc }} }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, xc, tx]
"""

# Runs in the namespace: sends the frames of FILE (hex, one a line) on k0p and
# prints as JSON the frames k1p received (hex) until all came or 5 s passed.
HELPER = """\
import json, socket, sys, time
frames = [bytes.fromhex(l) for l in open(sys.argv[1]).read().split()]
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
rx.bind(("k1p", 0))
rx.settimeout(0.2)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind(("k0p", 0))
for f in frames:
    tx.send(f)
got, end = [], time.time() + 5
while len(got) < len(frames) and time.time() < end:
    try:
        data, addr = rx.recvfrom(65535)
    except socket.timeout:
        continue
    if addr[2] != socket.PACKET_OUTGOING and data[12:14] == b"\\x08\\x00":
        got.append(data.hex())
print(json.dumps(got))
"""


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=check)


def ns(*cmd, check=True):
    return sh("ip", "netns", "exec", NS, *cmd, check=check)


def link(name):
    """(promiscuous, MAC) of an interface in the namespace."""
    info = json.loads(sh("ip", "-n", NS, "-j", "link", "show", name).stdout)[0]
    return "PROMISC" in info["flags"], info["address"]


def frames():
    from scapy.all import IP, UDP, Ether, Raw
    return [bytes(Ether(src="02:00:00:00:0c:01", dst="02:00:00:00:0c:02") /
                  IP(src="10.12.0.1", dst="10.12.0.2") / UDP(sport=4000 + i, dport=5000) /
                  Raw(b"pfkp %03d " % i + b"x" * (i * 7 % 200)))
            for i in range(N_FRAMES)]


def run(pipefwd, drv, tmp, errors):
    """One driver; False when its ports cannot be made here (skipped)."""
    topo = os.path.join(tmp, drv + ".yaml")
    report = os.path.join(tmp, drv + ".json")
    with open(topo, "w") as f:
        f.write(TOPO.format(drv=drv, mac=P0_MAC))
    before = {k: link(k) for k in ("k0", "k1")}
    argv = ["ip", "netns", "exec", NS, pipefwd, "-j", report, topo, "--",
            "--file-prefix=%s-%s" % (FILE_PREFIX, drv[4:])]
    try:
        proc, head = start_pipefwd(argv, timeout=30)
    except RuntimeError as e:
        if "cannot create device" in str(e) or "rx queue 0:" in str(e):
            print("SKIP %s: %s" % (drv, str(e).strip().splitlines()[-1]))
            return False
        errors.append("%s: %s" % (drv, e))
        return True
    try:
        during = {k: link(k) for k in ("k0", "k1")}
        got = json.loads(ns("/usr/bin/python3", "-c", HELPER,
                            os.path.join(tmp, "frames.hex")).stdout)
    finally:
        rest = stop(proc, errors)
    want = [f.hex() for f in frames()]
    if got != want:
        errors.append("%s: k1p received %d of %d frames as sent (first: %s)" % (
            drv, sum(g == w for g, w in zip(got, want)), len(want), got[:1]))
    if proc.returncode != 0:
        errors.append("%s: exit %d\n%s" % (drv, proc.returncode, head + rest))
    if not during["k0"][0] or not during["k1"][0]:
        errors.append("%s: not promiscuous while running: %s" % (drv, during))
    if drv == "net_af_packet" and during["k0"][1] != P0_MAC:
        errors.append("%s: k0 did not take p0's MAC while running: %s" % (drv, during))
    after = {k: link(k) for k in ("k0", "k1")}
    if after != before:
        errors.append("%s: interfaces not left as found: before %s, after %s" % (
            drv, before, after))
    try:
        with open(report) as f:
            st = json.load(f)
    except (OSError, ValueError) as e:
        errors.append("%s: no exit report: %s" % (drv, e))
        return True
    kept = 2 * XDP_FILL if drv == "net_af_xdp" else 0
    if (st["totals"]["unaccounted"] != 0 or st["mbufs_in_use_after_stop"] != 0 or
            st["mbufs_kept_by_drivers"] != kept or st["totals"]["rx"] < N_FRAMES):
        errors.append("%s: exit report: totals %s, mbufs in use %s, kept %s (want %d)" % (
            drv, st["totals"], st["mbufs_in_use_after_stop"], st["mbufs_kept_by_drivers"],
            kept))
    print("%s: %d/%d frames through, exit %d, kept %s, interfaces %s" % (
        drv, len(got), N_FRAMES, proc.returncode, st["mbufs_kept_by_drivers"], after))
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0 or subprocess.run(["which", "ip"], capture_output=True).returncode:
        print("SKIP: needs root and ip")
        return 77
    errors, ran = [], 0
    sh("ip", "netns", "add", NS)
    try:
        for i in (0, 1):
            sh("ip", "-n", NS, "link", "add", "k%d" % i, "type", "veth", "peer", "name",
               "k%dp" % i)
        ns("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        ns("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        for dev in ("k0", "k0p", "k1", "k1p"):
            sh("ip", "-n", NS, "link", "set", dev, "up")
        sh("ip", "-n", NS, "link", "set", "k1", "promisc", "on")
        with tempfile.TemporaryDirectory(prefix="pf_kernel_ports_") as tmp:
            with open(os.path.join(tmp, "frames.hex"), "w") as f:
                f.write("\n".join(fr.hex() for fr in frames()) + "\n")
            for drv in ("net_af_packet", "net_af_xdp"):
                ran += run(args.pipefwd, drv, tmp, errors)
    finally:
        sh("ip", "netns", "del", NS, check=False)
    if ran == 0:
        print("SKIP: neither driver can make a port here")
        return 77
    for e in errors:
        print("FAIL:", e)
    print("ok" if not errors else "%d failure(s)" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
