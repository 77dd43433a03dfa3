#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd benchmark harness: pipefwd against DPDK's own peers, same vdevs, same run.

    scripts/bench.py BUILD [--quick] [--only NAME,...] [--rounds N] [--write-report]
    scripts/bench.py BUILD --compare REF [--quick] [--only CASE,...]   (--only: those cases, else the quick set)

Every case feeds `net_pcap0,rx_pcap=F,infinite_rx=1` into a `net_null0` sink.
pipefwd and each peer (dpdk-testpmd io/mac, DPDK's l3fwd built from the
dpdk-doc examples into BUILD/bench/peers/) run in turns, A B A B ..., and the
rate of each run is read the same way for every program: the sink's
`opackets` from DPDK's telemetry socket over a fixed window after a warm-up.
pipefwd's own --stats-json gives cycles per packet per stage and its own
totals.tx / seconds (kept as a cross-check).

A case is one declarative entry in CASES (stages template, traffic, tables,
peers); a sweep is one entry in SWEEPS (a case and one parameter to vary).
Outputs: BUILD/bench/results.json and the report, BUILD/bench/report/benchmarks.md
with img/bench_*.png; only --write-report (make bench WRITE_REPORT=1) rewrites
the tracked docs/benchmarks.md and docs/img/.
"""
import argparse
import datetime
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_routes  # noqa: E402
import pcaplib  # noqa: E402


# The CPU map (--cpus): main lcore's CPU first, then the workers'. Default:
# CPU 0, then the last CPU counting down.
_NCPU = os.cpu_count() or 2
CPU_MAP = [0] + [(_NCPU - 1 - i) % _NCPU for i in range(_NCPU)]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
EXAMPLES = "/usr/share/dpdk/examples"
L3FWD_SRC = os.path.join(EXAMPLES, "l3fwd")
L3FWD_COMMON = os.path.join(EXAMPLES, "common")
OVS_WRAPPER = os.path.join(ROOT, "scripts", "bench_ovs.py")
TESTPMD = "dpdk-testpmd"

P0_MAC = "02:00:00:00:00:10"   # the forwarder's ingress port (frames are sent to it)
P1_MAC = "02:00:00:00:00:11"
GW_MAC = "02:00:00:00:00:99"   # the next hop beyond p1
HOST_MAC = "02:00:00:00:00:01"

# ---------------------------------------------------------------- traffic ----

TRAFFIC = {
    # name: frame sizes (cycled; Ethernet without FCS) and number of frames = flows
    "64B": dict(sizes=[60], frames=4096, desc="64-byte frames (60 + FCS), 4096 UDP flows"),
    "imix": dict(sizes=[60] * 7 + [590] * 4 + [1514], frames=4096,
                 desc="IMIX 7:4:1 of 64/594/1518-byte frames, 4096 UDP flows"),
    # The smallest IPv6/UDP frame is 62 bytes (14 + 40 + 8): 66 with the FCS.
    "64B6": dict(sizes=[62], frames=4096, ipv6=True,
                 desc="66-byte IPv6/UDP frames (62 + FCS), 4096 flows to routed prefixes"),
    # More flows than one core's L2 holds the lookups of (lpm's tbl24 lines, acl's trie).
    "64B-64k": dict(sizes=[60], frames=65536, desc="64-byte frames, 65536 UDP flows"),
    # IMIX with IPv6's smallest UDP frame in place of the 64-byte one.
    "imix6": dict(sizes=[62] * 7 + [590] * 4 + [1514], frames=4096, ipv6=True,
                  desc="IPv6/UDP IMIX 7:4:1 of 66/594/1518-byte frames, 4096 flows to routed "
                  "prefixes"),
}


def _csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _mac(s):
    return bytes.fromhex(s.replace(":", ""))


def udp_frame(size, src, dst, sport, dport, dst_mac=P0_MAC, src_mac=HOST_MAC):
    ip_len = size - 14
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0x4000, 64, 17, 0,
                     src.to_bytes(4, "big"), dst.to_bytes(4, "big"))
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", sport, dport, ip_len - 20, 0)
    return _mac(dst_mac) + _mac(src_mac) + b"\x08\x00" + ip + udp + bytes(ip_len - 28)


def write_pcap(path, frames):
    """@frames into @path, whole or not at all (a killed run leaves no half file)."""
    pcaplib.write_pcap(path, frames, stamp=lambda i: (i // 1000000, i % 1000000), atomic=True)


def mac_of(i):
    """The i-th MAC of the L2 table (locally administered, unicast)."""
    return "02:%02x:%02x:%02x:%02x:%02x" % (0x10 | (i >> 32) & 0xF, (i >> 24) & 0xFF,
                                           (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF)


def unicast(rnd):
    while True:
        a = rnd.getrandbits(32)
        if 0 < a >> 24 < 224 and a >> 24 not in (10, 127, 172, 192):
            return a


def udp6_frame(size, src, dst, sport, dport):
    """IPv6/UDP, checksum over the pseudo-header (RFC 8200 8.1)."""
    plen = size - 54
    udp = struct.pack("!HHHH", sport, dport, plen, 0) + bytes(plen - 8)
    ck = _csum(src + dst + struct.pack("!IxxxB", plen, 17) + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", ck) + udp[8:]
    ip = struct.pack("!IHBB", 6 << 28, plen, 17, 64) + src + dst
    return _mac(P0_MAC) + _mac(HOST_MAC) + b"\x86\xdd" + ip + udp


def gen_traffic6(name):
    """IPv6/UDP frames, one flow each, to random addresses inside the first
    1022 prefixes of routes6() (the same for every table size)."""
    t = TRAFFIC[name]
    rnd = random.Random(6)
    pfx = gen_routes.gen6(1022, 8200)
    src = bytes.fromhex("20010db8000000000000000000000009")
    frames = []
    for i in range(t["frames"]):
        a, plen = pfx[rnd.randrange(len(pfx))]
        dst = a | (rnd.getrandbits(128) & ((1 << (128 - plen)) - 1))
        frames.append(udp6_frame(t["sizes"][i % len(t["sizes"])], src, dst.to_bytes(16, "big"),
                                 1024 + i % 60000, 5000 + i % 1000))
    return frames


def gen_traffic(name, macs=0):
    """IPv4/UDP frames, one flow each: sources in 192.168/16, destinations
    uniform over the unicast space (the same frames whatever the table size, so
    only the table changes between sizes). With macs > 0 the destination MACs
    are spread over the L2 table instead."""
    t = TRAFFIC[name]
    rnd = random.Random(8)
    frames = []
    for i in range(t["frames"]):
        size = t["sizes"][i % len(t["sizes"])]
        dst_mac = mac_of(rnd.randrange(macs)) if macs else P0_MAC
        frames.append(udp_frame(size, 0xC0A80000 | (i + 1), unicast(rnd),
                                1024 + i % 60000, 5000 + i % 1000, dst_mac=dst_mac,
                                src_mac=HOST_MAC))
    return frames

# ----------------------------------------------------------------- tables ----
# Each generator writes the same table in pipefwd's format and the peer's.


def routes(n):
    """A default route (as 0/1 + 128/1: rte_lpm has no /0) and n-2 distinct
    random unicast prefixes, lengths uniform over /13../24 with 2 % over
    /25../32 (tbl8 groups). Not a BGP mix on purpose: rte_lpm_add scans the
    rules of the same length linearly, so 600k /24s would take minutes to load
    in both pipefwd and l3fwd; spread over 12 lengths 1M routes load in ~1 min."""
    rnd = random.Random(n)
    seen, out = set(), [(0, 1), (0x80000000, 1)]
    while len(out) < n:
        plen = rnd.randrange(13, 25) if rnd.random() < 0.98 else rnd.randrange(25, 33)
        a = unicast(rnd) & (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
        if (a, plen) not in seen:
            seen.add((a, plen))
            out.append((a, plen))
    return out


def ip4(a):
    return "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)


def write_routes(d, n):
    pf, peer = os.path.join(d, "routes-%d.txt" % n), os.path.join(d, "routes-%d.l3fwd" % n)
    if not os.path.exists(pf):
        rs = routes(n)
        with open(pf + ".tmp", "w") as f:
            f.write("# %d routes (scripts/bench.py routes()), all via gw\n" % n)
            f.writelines("%s/%d gw\n" % (ip4(a), plen) for a, plen in rs)
        with open(peer, "w") as f:
            f.writelines("R%s/%d 1\n" % (ip4(a), plen) for a, plen in rs)
        os.replace(pf + ".tmp", pf)
    return pf, peer


def write_routes6(d, n):
    """A default route (as ::/1 + 8000::/1: rte_lpm6 has no /0) and n-2 prefixes
    of scripts/gen_routes.py --ipv6 (the IPv6 BGP length mix, clustered)."""
    pf, peer = os.path.join(d, "routes6-%d.txt" % n), os.path.join(d, "routes6-%d.l3fwd" % n)
    if not os.path.exists(pf):
        rs = [(0, 1), (1 << 127, 1)] + gen_routes.gen6(n - 2, 8200)
        with open(pf + ".tmp", "w") as f:
            f.write("# %d IPv6 routes (scripts/bench.py write_routes6()), all via gw\n" % n)
            f.writelines("%s/%d gw\n" % (gen_routes.ip6_str(a), plen) for a, plen in rs)
        with open(peer, "w") as f:
            f.writelines("R%s/%d 1\n" % (gen_routes.ip6_str(a), plen) for a, plen in rs)
        os.replace(pf + ".tmp", pf)
    return pf, peer


def acl_rules(n):
    """n-1 deny rules the traffic never matches (sources outside 192.168/16,
    mixed prefix lengths and port ranges, so the trie is not trivial) and a
    last rule permitting everything: every packet walks the whole classifier."""
    rnd = random.Random(n)
    out = []
    for k in range(n - 1):
        src_len = rnd.choice([8, 12, 16, 20, 24, 32])
        src = (0xAC100000 | rnd.getrandbits(20)) & ~((1 << (32 - src_len)) - 1) & 0xFFFFFFFF
        dst_len = rnd.choice([0, 8, 16, 24])
        dst = unicast(rnd) & ~((1 << (32 - dst_len)) - 1) & 0xFFFFFFFF if dst_len else 0
        lo = rnd.randrange(0, 60000)
        out.append(dict(src=src, src_len=src_len, dst=dst, dst_len=dst_len, sport=(0, 65535),
                        dport=(lo, lo + rnd.choice([0, 10, 1000])), proto=rnd.choice([6, 17])))
    return out


def write_acl(d, n):
    pf, peer = os.path.join(d, "acl-%d.rules" % n), os.path.join(d, "acl-%d.l3fwd" % n)
    if not os.path.exists(pf):
        rs = acl_rules(n)
        with open(pf + ".tmp", "w") as f:
            for r in rs:
                f.write("deny src %s/%d dst %s proto %s dport %d-%d\n" % (
                    ip4(r["src"]), r["src_len"],
                    "%s/%d" % (ip4(r["dst"]), r["dst_len"]) if r["dst_len"] else "any",
                    "tcp" if r["proto"] == 6 else "udp", r["dport"][0], r["dport"][1]))
            f.write("permit\n")
        with open(peer, "w") as f:
            for r in rs:
                f.write("@%s/%d %s/%d 0 : 65535 %d : %d %d/0xff\n" % (
                    ip4(r["src"]), r["src_len"], ip4(r["dst"]), r["dst_len"], r["dport"][0],
                    r["dport"][1], r["proto"]))
            f.write("R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x0/0x0 1\n")
        os.replace(pf + ".tmp", pf)
    return pf, peer


def acl_rules6(n):
    """The IPv6 twin of acl_rules(): n-1 deny rules the traffic (from
    2001:db8::9, see gen_traffic6) never matches, their sources under
    2001:db8:X::/48 with X > 0, mixed prefix lengths and port ranges, and a last
    rule permitting all IPv6."""
    rnd = random.Random(n + 6)
    out = []
    for _ in range(n - 1):
        src_len = rnd.choice([48, 56, 64, 80, 96, 128])
        src = (0x20010db8 << 96 | rnd.randrange(1, 1 << 16) << 80 | rnd.getrandbits(80)) & \
            ~((1 << (128 - src_len)) - 1)
        dst_len = rnd.choice([0, 16, 32, 48, 64])
        dst = (1 << 125 | rnd.getrandbits(125)) & ~((1 << (128 - dst_len)) - 1) if dst_len else 0
        lo = rnd.randrange(0, 60000)
        out.append(dict(src=src, src_len=src_len, dst=dst, dst_len=dst_len,
                        dport=(lo, lo + rnd.choice([0, 10, 1000])), proto=rnd.choice([6, 17])))
    return out


def ip6_full(a):
    """All eight groups, no "::": l3fwd's ACL parser reads nothing else."""
    return ":".join("%x" % (a >> (112 - 16 * i) & 0xFFFF) for i in range(8))


def write_acl6(d, n):
    """acl_rules6(n) in pipefwd's rule syntax and as l3fwd's --rule_ipv6 file
    (its --rule_ipv4 file then only routes IPv4 to port 1)."""
    pf, peer = os.path.join(d, "acl6-%d.rules" % n), os.path.join(d, "acl6-%d.l3fwd" % n)
    if not os.path.exists(pf):
        rs = acl_rules6(n)
        with open(pf + ".tmp", "w") as f:
            for r in rs:
                f.write("deny src %s/%d dst %s proto %s dport %d-%d\n" % (
                    gen_routes.ip6_str(r["src"]), r["src_len"],
                    "%s/%d" % (gen_routes.ip6_str(r["dst"]), r["dst_len"]) if r["dst_len"]
                    else "::/0", "tcp" if r["proto"] == 6 else "udp", r["dport"][0],
                    r["dport"][1]))
            f.write("permit src ::/0\n")
        with open(peer, "w") as f:
            for r in rs:
                f.write("@%s/%d %s/%d 0 : 65535 %d : %d %d/0xff\n" % (
                    ip6_full(r["src"]), r["src_len"], ip6_full(r["dst"]), r["dst_len"],
                    r["dport"][0], r["dport"][1], r["proto"]))
            f.write("R0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0x0/0x0 1\n")
        os.replace(pf + ".tmp", pf)
    return pf, peer


def write_macs(d, n):
    pf = os.path.join(d, "macs-%d.txt" % n)
    if not os.path.exists(pf):
        with open(pf + ".tmp", "w") as f:
            f.writelines("%s p1\n" % mac_of(i) for i in range(n))
        os.replace(pf + ".tmp", pf)
    return pf, None

# ------------------------------------------------------------------ cases ----
# Stage templates: tokens @ROUTES@ @ACL@ @MACS@ are table files, filled per case.
# `split` is the pipelined layout: stages per worker lcore (2 CPUs here).

PASS = dict(kind="pass", stages="""\
  rx: { type: rx, ports: [p0], next: xc }
  xc: { type: xconnect, pairs: { p0: p1 }, next: tx }
  tx: { type: tx, ports: [p1] }
""", split=[["rx"], ["xc", "tx"]])

L3 = dict(kind="l3", stages="""\
  rx:  { type: rx, ports: [p0], next: { ipv4: lpm } }
  lpm: { type: lpm, nexthops: { gw: { port: p1, mac: "%s" } }, routes_file: "@ROUTES@", next: tx }
  tx:  { type: tx, ports: [p1] }
""" % GW_MAC, split=[["rx"], ["lpm", "tx"]])

ACL = dict(kind="acl", stages="""\
  rx:  { type: rx, ports: [p0], next: { ipv4: acl } }
  acl: { type: acl, rules_file: "@ACL@", next: xc }
  xc:  { type: xconnect, pairs: { p0: p1 }, next: tx }
  tx:  { type: tx, ports: [p1] }
""", split=[["rx"], ["acl", "xc", "tx"]])

L2 = dict(kind="l2", stages="""\
  rx:    { type: rx, ports: [p0], next: l2fib }
  l2fib: { type: l2fib, ports: [p0, p1], static: "@MACS@", table_size: @MACSIZE@, next: tx }
  tx:    { type: tx, ports: [p1] }
""", split=[["rx"], ["l2fib", "tx"]])

L3V6 = dict(kind="l3v6", stages="""\
  rx:   { type: rx, ports: [p0], next: { ipv6: lpm6 } }
  lpm6: { type: lpm6, nexthops: { gw: { port: p1, mac: "%s" } }, routes_file: "@ROUTES6@", next: tx }
  tx:   { type: tx, ports: [p1] }
""" % GW_MAC, split=[["rx"], ["lpm6", "tx"]])

ACL6 = dict(kind="acl6", stages="""\
  rx:  { type: rx, ports: [p0], next: { ipv6: acl } }
  acl: { type: acl, rules_file: "@ACL6@", next: xc }
  xc:  { type: xconnect, pairs: { p0: p1 }, next: tx }
  tx:  { type: tx, ports: [p1] }
""", split=[["rx"], ["acl", "xc", "tx"]])

FULL = dict(kind="full", stages="""\
  rx:  { type: rx, ports: [p0], next: { ipv4: acl } }
  acl: { type: acl, rules_file: "@ACL@", next: lpm }
  lpm: { type: lpm, nexthops: { gw: { port: p1, mac: "%s" } }, routes_file: "@ROUTES@", next: tx }
  tx:  { type: tx, ports: [p1] }
""" % GW_MAC, split=[["rx", "acl"], ["lpm", "tx"]])

# Two policies (an ingress and an egress ACL, the same 10k rules) around the route
# lookup: stage work far above the hand-off, split in two halves of about equal cost.
BIG = dict(kind="big", stages="""\
  rx:      { type: rx, ports: [p0], next: { ipv4: acl } }
  acl:     { type: acl, rules_file: "@ACL@", next: lpm }
  lpm:     { type: lpm, nexthops: { gw: { port: p1, mac: "%s" } }, routes_file: "@ROUTES@", next: acl_out }
  acl_out: { type: acl, rules_file: "@ACL@", next: tx }
  tx:      { type: tx, ports: [p1] }
""" % GW_MAC, split=[["rx", "acl"], ["lpm", "acl_out", "tx"]])


def case(name, title, topo, peers=(), traffic="64B", quick=False,
         layouts=("fused", "pipelined"), rounds=None, **tables):
    """One benchmark case. rounds caps the alternations (big tables load slowly)."""
    return dict(name=name, title=title, topo=topo, peers=list(peers), traffic=traffic,
                quick=quick, layouts=list(layouts), rounds=rounds, tables=tables)


CASES = [
    case("pass", "pass-through rx -> xconnect -> tx", PASS, ["testpmd-io", "testpmd-mac"],
         quick=True),
    case("pass-imix", "pass-through, IMIX", PASS, ["testpmd-io"], traffic="imix"),
    case("l3-1k", "L3 routing, 1k routes", L3, ["l3fwd-lpm", "l3fwd-graph"], quick=True,
         routes=1 << 10),
    case("l3-1M", "L3 routing, 1M routes", L3, ["l3fwd-lpm"], layouts=["fused"], rounds=3,
         routes=1 << 20),
    case("l3-1k-imix", "L3 routing, 1k routes, IMIX", L3, ["l3fwd-lpm"], traffic="imix",
         routes=1 << 10),
    case("l3v6-1k", "IPv6 routing, 1k routes", L3V6, ["l3fwd-lpm"], traffic="64B6",
         routes6=1 << 10),
    # No peer: l3fwd's IPv6 table holds 1024 rules and 64k tbl8 groups (1M needs
    # about 455k, which its -m 512 copy for the other cases could not allocate).
    case("l3v6-1M", "IPv6 routing, 1M routes", L3V6, traffic="64B6",
         layouts=["fused"], rounds=3, routes6=1 << 20),
    case("l3v6-1k-imix", "IPv6 routing, 1k routes, IMIX", L3V6, ["l3fwd-lpm"],
         traffic="imix6", routes6=1 << 10),
    case("acl6-100", "IPv6 ACL, 100 rules", ACL6, ["l3fwd-acl"], traffic="64B6", acl6=100),
    case("acl6-1000", "IPv6 ACL, 1000 rules", ACL6, ["l3fwd-acl"], traffic="64B6", acl6=1000),
    case("acl-1", "ACL, 1 rule", ACL, ["l3fwd-acl"], acl=1),
    case("acl-100", "ACL, 100 rules", ACL, ["l3fwd-acl"], quick=True, acl=100),
    case("acl-1000", "ACL, 1000 rules", ACL, ["l3fwd-acl"], acl=1000),
    case("l2-1k", "L2 bridge, 1k MACs", L2, ["ovs-normal"], quick=True, macs=1 << 10),
    case("l2-16k", "L2 bridge, 16k MACs", L2, ["ovs-normal"], quick=True, macs=1 << 14),
    case("l2-1M", "L2 bridge, 1M MACs", L2, macs=1 << 20),
    case("l2-4M", "L2 bridge, 4M MACs", L2, layouts=["fused"], rounds=3, macs=1 << 22),
    case("full", "rx -> acl (100 rules) -> lpm (1k routes) -> tx", FULL, quick=True, acl=100,
         routes=1 << 10),
    # The same with the split the planner picks for it (docs/scaling.md, 6).
    case("full-rx", "rx -> acl (100 rules) -> lpm (1k routes) -> tx, split [rx] | [acl lpm tx]",
         dict(FULL, kind="full-rx", split=[["rx"], ["acl", "lpm", "tx"]]), acl=100,
         routes=1 << 10),
    # Where pipelining should win (issue 31 item 4): one rx queue, work per packet
    # far above the hand-off, lookups over more than one core's cache.
    case("big", "rx -> acl (10k rules) -> lpm (64k routes) -> acl (10k rules) -> tx, 64k flows",
         BIG, traffic="64B-64k", rounds=3, acl=10000, routes=1 << 16),
]

# Sweeps: fused layout, pipefwd only, one parameter varied over `values`.
SWEEPS = [
    dict(name="burst", base="l3-1k", key="burst", values=[8, 16, 32, 64, 128],
         title="L3 1k routes: burst size per edge", stage="lpm"),
    dict(name="routes", base="l3-1k", key="routes",
         values=[1 << 10, 1 << 14, 1 << 16, 1 << 18, 1 << 20], title="routes", stage="lpm"),
    dict(name="acl", base="acl-100", key="acl", values=[1, 10, 100, 1000, 4000],
         title="ACL rules", stage="acl"),
    dict(name="macs", base="l2-1k", key="macs", values=[1 << 10, 1 << 16, 1 << 20, 1 << 22],
         title="MACs", stage="l2fib"),
]

# ------------------------------------------------------------------ peers ----
# Commands use the same vdevs; {eal} is the shared EAL part, {pcap} the traffic.
PEERS = {
    "testpmd-io": dict(desc="dpdk-testpmd io forwarding", cmd=[
        TESTPMD, "{eal}", "--lcores=0@{main},1@{last}", "--", "--forward-mode=io", "--no-flush-rx",
        "--total-num-mbufs={mbufs}", "-a"]),
    "testpmd-mac": dict(desc="dpdk-testpmd mac forwarding (rewrites MACs)", cmd=[
        TESTPMD, "{eal}", "--lcores=0@{main},1@{last}", "--", "--forward-mode=mac", "--no-flush-rx",
        "--total-num-mbufs={mbufs}", "-a"]),
    "l3fwd-lpm": dict(desc="DPDK examples/l3fwd, LPM lookup", build="l3fwd", cmd=[
        "{l3fwd}", "{eal}", "--lcores=1@{last}", "--", "-p", "0x3", "--config", "(0,0,1),(1,0,1)",
        "--parse-ptype", "--lookup=lpm", "--rule_ipv4={routes}", "--rule_ipv6={routes6}",
        "--eth-dest=1,%s" % GW_MAC]),
    "l3fwd-acl": dict(desc="DPDK examples/l3fwd, ACL lookup", build="l3fwd", cmd=[
        "{l3fwd}", "{eal}", "--lcores=1@{last}", "--", "-p", "0x3", "--config", "(0,0,1),(1,0,1)",
        "--parse-ptype", "--lookup=acl", "--rule_ipv4={acl}", "--rule_ipv6={acl6}",
        "--eth-dest=1,%s" % GW_MAC]),
    # Its routes are compiled in: the copy gets the case's table (L3FWD_GRAPH_PATCHES).
    # One tx queue per lcore on every port: net_pcap0 gets two tx_pcap queues
    # (nothing is routed to port 0, so they stay empty).
    "l3fwd-graph": dict(desc="DPDK examples/l3fwd-graph (rte_graph + rte_node)",
                        build="l3fwd-graph", vdev0=",tx_pcap=/dev/null,tx_pcap=/dev/null", cmd=[
        "{l3fwd_graph}", "{eal}", "--lcores=0@{main},1@{last}", "--", "-p", "0x3",
        "--config", "(0,0,1),(1,0,1)", "--eth-dest=1,%s" % GW_MAC]),
    # scripts/bench_ovs.py: private ovsdb-server + ovs-vswitchd-dpdk, NORMAL,
    # the sink added first (DPDK port 0); the megaflow cache fills on the first
    # packets (upcalls), so the warm-up is longer.
    "ovs-normal": dict(desc="OVS-DPDK (openvswitch-switch-dpdk) netdev bridge, NORMAL action "
                       "(MAC learning; the table's MACs as static entries)", sink_port=0,
                       warmup_s=3.0, needs="/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk",
                       cmd=[
        "/usr/bin/python3", OVS_WRAPPER, "--prefix", "{prefix}", "--rx", "{pcap}",
        "--macs", "{macs}", "--table-size", "{macsize}", "--mem", "{ovsmem}", "--cpu", "{last}",
        "--log-copy", "{ovslog}"]),
}

# l3fwd is built from Debian's dpdk-doc copy in BUILD/bench/peers, with three
# edits applied to that copy only (sed expressions, shown in the report).
L3FWD_PATCHES = [
    ("main.c", r"s|\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,|.offloads = 0, /* bench: vdevs have no RX checksum offload */|"),
    ("l3fwd_lpm.c", r"s|^#define IPV4_L3FWD_LPM_MAX_RULES .*|#define IPV4_L3FWD_LPM_MAX_RULES (1 << 21)|"),
    ("l3fwd_lpm.c", r"s|^#define IPV4_L3FWD_LPM_NUMBER_TBL8S .*|#define IPV4_L3FWD_LPM_NUMBER_TBL8S (1 << 16)|"),
    ("l3fwd_lpm.c", r's|printf("LPM: Adding route %s|if (i < 4) printf("LPM: Adding route %s|'),
]

# l3fwd-graph is built from dpdk-doc's copy in BUILD/bench/peers too. Its
# routes (198.18.0-7.0/24) are compiled into main.c: these edits swap them for
# the case's route table (bench_routes.h, written from the same routes file
# pipefwd and l3fwd load, every route via port 1) and key the next hop by port
# instead of by route index (rte_node's ip4_rewrite holds 64 next hops).
L3FWD_GRAPH_PATCHES = [
    ("main.c", r"/^static struct ipv4_l3fwd_lpm_route ipv4_l3fwd_lpm_route_array\[\] = {/,/^};/"
     r"{/RTE_IPV4(198, 18, /d}"),
    ("main.c", r"s|^static struct ipv4_l3fwd_lpm_route ipv4_l3fwd_lpm_route_array\[\] = {|"
     r'&\n#include "bench_routes.h"|'),
    ("main.c", r"s|ipv4_l3fwd_lpm_route_array\[i\].depth, i,|"
     r"ipv4_l3fwd_lpm_route_array[i].depth, dst_port,|"),
    ("main.c", r"s|rte_node_ip4_rewrite_add(i, rewrite_data,|"
     r"rte_node_ip4_rewrite_add(dst_port, rewrite_data,|"),
]

# ---------------------------------------------------------------- helpers ----


def log(msg):
    print(msg, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def telemetry(prefix, cmd, timeout=1.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
        info = json.loads(s.recv(16384).decode())
        s.send(cmd.encode())
        return json.loads(s.recv(info.get("max_output_len", 16384)).decode())
    finally:
        s.close()


def sink_opackets(prefix, port=1):
    r = telemetry(prefix, "/ethdev/stats,%d" % port)
    return r["/ethdev/stats"]["opackets"]


def worker_oncpu(pid):
    """{lcore id: ns on a CPU since start} of pipefwd's worker threads (the
    scheduler's own account, /proc/PID/task/TID/schedstat)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                m = re.match(r"rte-worker-(\d+)$", f.read().strip())
            if m:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    out[int(m.group(1))] = int(f.read().split()[0])
        except OSError:
            pass
    return out


def cpu_snapshot(pid, prefix):
    """Per worker lcore: its time on a CPU, its busy and total cycles, and the
    packets of its busiest stage (those it takes in)."""
    cpu = worker_oncpu(pid)
    hz = telemetry(prefix, "/pipefwd/totals")["/pipefwd/totals"]["tsc_hz"]
    lc = telemetry(prefix, "/pipefwd/lcores")["/pipefwd/lcores"]
    st = telemetry(prefix, "/pipefwd/stages")["/pipefwd/stages"]
    out = {}
    for k, v in lc.items():
        if not v.get("stages") or int(k) not in cpu:
            continue
        out[int(k)] = dict(ns=cpu[int(k)], busy=v["busy_cycles"], total=v["total_cycles"], hz=hz,
                           pkts=max(st[n]["packets"] for n in v["stages"] if n in st))
    return out


def free_cpu(a, b, secs):
    """What the lcores did per second of CPU they had, between snapshots @a and
    @b (@secs apart): each lcore's packets over its time on a CPU less its
    idle passes (passes that moved nothing, timed on the wall clock). An
    lcore that never idles (a source on looping traffic, or the one that
    holds the others back) is measured exactly: the scheduler counts only
    the time it ran. One that idles is measured at most that fast (a
    preemption inside an idle pass counts as idle), so the slowest lcore is
    the layout's rate on CPUs of its own: the load-proof counterpart of the
    wall-clock Mpps. share: the CPU each lcore got."""
    caps, share = {}, {}
    for k in b:
        if k not in a:
            continue
        ns, total = b[k]["ns"] - a[k]["ns"], b[k]["total"] - a[k]["total"]
        idle, pkts = total - (b[k]["busy"] - a[k]["busy"]), b[k]["pkts"] - a[k]["pkts"]
        share[str(k)] = round(ns / 1e9 / secs, 3)
        work = ns / 1e9 - idle / b[k]["hz"]
        if work > 0 and pkts > 0:
            caps[str(k)] = round(pkts / work / 1e6, 3)
    # An lcore whose idle passes took more than its CPU time (preempted while
    # idle) is not measured: the rate is then at most the others' (free_upper).
    return dict(free_mpps=min(caps.values()) if caps else None, lcore_free_mpps=caps,
                cpu_share=share, free_upper=len(caps) < len(share))


def planned(plan, lmap):
    """The planner's Mpps for the fused layout and for the split @lmap
    ({lcore: [stages]}), from /pipefwd/plan,all=1."""
    out = {}
    want = " | ".join(" ".join(g) for _, g in sorted(lmap.items(), key=lambda kv: int(kv[0])))
    for l in plan.get("layouts", {}).values():
        if l["kind"] == "fused":
            out["fused"] = l["kpps"] / 1000.0
        if l["kind"] == "split" and l["groups"] == want:
            out["pipelined"] = l["kpps"] / 1000.0
    return out


def median(xs):
    return statistics.median(xs) if xs else None


def spread(xs):
    """(max - min) / median, in percent."""
    return 100.0 * (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 and median(xs) else 0.0


def git_commit(path=ROOT):
    try:
        c = subprocess.run(["git", "-C", path, "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", path, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return c + ("-dirty" if dirty else "")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def rel(p):
    return os.path.relpath(p, ROOT) if p.startswith(ROOT) else p


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.join(self.build, "bench")
        for d in ("traffic", "tables", "topo", "logs", "stats", "peers"):
            os.makedirs(os.path.join(self.out, d), exist_ok=True)
        self.quick = args.quick
        self.rounds = args.rounds or (3 if self.quick else 5)
        self.warm = 0.5 if self.quick else 1.0
        self.window = 1.0 if self.quick else 2.0
        self.pipefwd = os.path.join(self.build, "app", "pipefwd")
        self.l3fwd = None
        self.l3fwd_graph = {}
        self.seq = 0
        # --file-prefix base: two harnesses at once must not read each other's telemetry.
        self.prefix = getattr(args, "file_prefix", None) or "bench"

    # -- inputs --
    def pcap(self, traffic, macs=0):
        p = os.path.join(self.out, "traffic", "%s%s.pcap" % (traffic, "-l2-%d" % macs if macs else ""))
        if not os.path.exists(p):
            write_pcap(p, gen_traffic6(traffic) if TRAFFIC[traffic].get("ipv6") else
                       gen_traffic(traffic, macs))
        return p

    def tables(self, tables):
        d = os.path.join(self.out, "tables")
        t = {}
        if "routes" in tables:
            t["routes"], t["routes_peer"] = write_routes(d, tables["routes"])
        if "acl" in tables:
            t["acl"], t["acl_peer"] = write_acl(d, tables["acl"])
        if "macs" in tables:
            t["macs"], _ = write_macs(d, tables["macs"])
        if "acl6" in tables:
            t["acl6pf"], t["acl6"] = write_acl6(d, tables["acl6"])
            t["acl_peer"] = os.path.join(d, "empty4-acl.l3fwd")
            with open(t["acl_peer"], "w") as f:
                f.write("R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x0/0x0 1\n")
        elif "routes6" in tables:
            t["routes6pf"], t["routes6"] = write_routes6(d, tables["routes6"])
            t["routes_peer"] = os.path.join(d, "empty4.l3fwd")
            with open(t["routes_peer"], "w") as f:
                f.write("R198.18.0.0/24 1\n")
        elif "routes_peer" in t or "acl_peer" in t:
            t["routes6"] = os.path.join(d, "empty6.l3fwd")
            t["acl6"] = os.path.join(d, "empty6-acl.l3fwd")
            with open(t["routes6"], "w") as f:
                f.write("R2001:db8::/64 1\n")
            with open(t["acl6"], "w") as f:
                f.write("R0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0x0/0x0 1\n")
        return t

    @staticmethod
    def mem(tables):
        big = tables.get("routes", 0) >= 1 << 18 or tables.get("macs", 0) >= 1 << 20 or \
            tables.get("routes6", 0) >= 1 << 18 or tables.get("acl", 0) >= 5000
        return 2048 if big else 512

    def topology(self, c, layout, burst=32, tables=None):
        tables = tables if tables is not None else c["tables"]
        t = self.tables(tables)
        pcap = self.pcap(c["traffic"], tables.get("macs", 0))
        stages = c["topo"]["stages"]
        for tok, key in (("@ROUTES@", "routes"), ("@ACL@", "acl"), ("@MACS@", "macs"),
                         ("@ROUTES6@", "routes6pf"), ("@ACL6@", "acl6pf")):
            if key in t:
                stages = stages.replace(tok, t[key])
        stages = stages.replace("@MACSIZE@", str(tables.get("macs", 0) + 4096))
        names = [ln.split(":")[0].strip() for ln in stages.splitlines() if ln.strip()]
        groups = [names] if layout == "fused" else c["topo"]["split"]
        # Pinned like the peers: the main lcore on the CPU map's first CPU,
        # the workers on the rest in order (floating lcores let two
        # pipeline workers share one CPU and cost 5x here).
        main_cpu, workers = CPU_MAP[0], CPU_MAP[1:]
        pin = ",".join(["0@%d" % main_cpu] + ["%d@%d" % (i + 1, workers[i % len(workers)])
                                             for i in range(len(groups))])
        y = ['eal: [--no-huge, -m, "%d", --no-pci, "--lcores=%s"]' % (self.mem(tables), pin),
             "ports:",
             '  p0: { device: "net_pcap0,rx_pcap=%s,infinite_rx=1", mac: "%s" }' % (pcap, P0_MAC),
             '  p1: { device: "net_null0,no-rx=1", mac: "%s" }' % P1_MAC,
             "stages:", stages.rstrip(),
             "rings:", "  default: { size: 1024, burst: %d }" % burst,
             "lcores:"]
        y += ["  %d: [%s]" % (i + 1, ", ".join(g)) for i, g in enumerate(groups)]
        tag = "%s-%s-%s-b%d-%s" % (c["topo"]["kind"], c["traffic"], layout, burst,
                                "-".join("%s%d" % kv for kv in sorted(tables.items())))
        path = os.path.join(self.out, "topo", tag + ".yaml")
        with open(path, "w") as f:
            f.write("# generated by scripts/bench.py: %s (%s)\n" % (c["title"], layout))
            f.write("\n".join(y) + "\n")
        lmap = {str(i + 1): g for i, g in enumerate(groups)}
        return path, lmap, pcap, t

    def check(self, topo, binary=None):
        r = subprocess.run([binary or self.pipefwd, "--check", topo], capture_output=True, text=True)
        if r.returncode != 0:
            err = (r.stderr or r.stdout).strip().splitlines()
            return err[0] if err else "pipefwd --check failed"
        return None

    # -- peers --
    def build_example(self, app, dest, patches, prepare=None):
        """Copy dpdk-doc's examples/APP to peers/DEST, apply the sed patches (after
        prepare(src), which may add files), build it as its Makefile does."""
        src = os.path.join(self.out, "peers", dest)
        binary = os.path.join(src, "build", app)
        stamp = os.path.join(src, ".bench-patched")
        if not os.path.exists(binary) or not os.path.exists(stamp):
            orig = os.path.join(EXAMPLES, app)
            if not os.path.isdir(orig):
                raise RuntimeError("%s missing: install dpdk-doc" % orig)
            shutil.rmtree(src, ignore_errors=True)
            shutil.copytree(orig, src)
            if prepare:
                prepare(src)
            self.patch(src, patches, app)
            log("bench: building %s from %s into %s" % (app, orig, rel(src)))
            env = dict(os.environ, CFLAGS="-I" + L3FWD_COMMON)
            with open(os.path.join(self.out, "logs", "%s-build.log" % app), "w") as lf:
                sh(["make", "-C", src, "-j2"], env=env, stdout=lf, stderr=subprocess.STDOUT)
            open(stamp, "w").close()
        return binary

    def build_l3fwd(self):
        if not self.l3fwd:
            self.l3fwd = self.build_example("l3fwd", "l3fwd-src", L3FWD_PATCHES)
        return self.l3fwd

    def build_l3fwd_graph(self, routes):
        """l3fwd-graph with the routes of file `routes` (pipefwd's format) compiled in."""
        rs = [ln.split()[0] for ln in open(routes) if ln.strip() and not ln.startswith("#")]

        def write_routes_h(src):
            with open(os.path.join(src, "bench_routes.h"), "w") as f:
                f.write("/* generated by scripts/bench.py from %s */\n" % self.show(routes))
                for r in rs:
                    a, plen = r.split("/")
                    f.write("{RTE_IPV4(%s), %s, 1},\n" % (a.replace(".", ", "), plen))
        if len(rs) not in self.l3fwd_graph:
            self.l3fwd_graph[len(rs)] = self.build_example(
                "l3fwd-graph", "l3fwd-graph-src-%d" % len(rs), L3FWD_GRAPH_PATCHES,
                write_routes_h)
        return self.l3fwd_graph[len(rs)]

    @staticmethod
    def patch(src, patches, what):
        for f, expr in patches:
            before = open(os.path.join(src, f)).read()
            sh(["sed", "-i", expr, os.path.join(src, f)])
            if open(os.path.join(src, f)).read() == before:
                raise RuntimeError("%s patch did not apply: %s %s" % (what, f, expr))

    def peer_cmd(self, peer, pcap, t, tables):
        p = PEERS[peer]
        if p.get("needs") and not os.path.exists(p["needs"]):
            raise RuntimeError("%s missing: install openvswitch-switch-dpdk" % p["needs"])
        prefix = "%s_%s" % (self.prefix, peer.replace("-", "_"))
        eal = ["--no-huge", "-m", str(self.mem(tables)), "--no-pci", "--file-prefix=" + prefix,
               "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1%s" % (pcap, p.get("vdev0", "")),
               "--vdev", "net_null0,no-rx=1"]
        build = p.get("build")
        subs = dict(main=CPU_MAP[0], last=CPU_MAP[1], mbufs=TRAFFIC_FRAMES(pcap) + 16384,
                    l3fwd=self.build_l3fwd() if build == "l3fwd" else "",
                    l3fwd_graph=self.build_l3fwd_graph(t["routes"])
                    if build == "l3fwd-graph" else "",
                    routes=t.get("routes_peer", ""), routes6=t.get("routes6", ""),
                    acl=t.get("acl_peer", ""), acl6=t.get("acl6", ""),
                    prefix=prefix, pcap=pcap, macs=t.get("macs", ""),
                    macsize=tables.get("macs", 0) + 4096, ovsmem=max(1024, self.mem(tables)),
                    ovslog=os.path.join(self.out, "logs", "ovs-vswitchd-%d.log" %
                                        tables.get("macs", 0)))
        cmd = []
        for a in p["cmd"]:
            if a == "{eal}":
                cmd += eal
            else:
                cmd.append(a.format(**subs))
        return cmd, prefix

    # -- one run --
    def run(self, label, cmd, prefix, json_path=None, sink_port=1, warm=None):
        """Start cmd, wait until the sink transmits, measure over the window, stop."""
        self.seq += 1
        logf = os.path.join(self.out, "logs", "%03d-%s.log" % (self.seq, label))
        res = dict(label=label, ok=False)
        with open(logf, "w") as lf:
            lf.write(" ".join(cmd) + "\n")
            lf.flush()
            t_start = time.monotonic()
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=lf, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 180
                while True:
                    if p.poll() is not None:
                        res["error"] = "exited with %d before forwarding (see %s)" % (
                            p.returncode, rel(logf))
                        return res
                    try:
                        if sink_opackets(prefix, sink_port) > 0:
                            # Start to forwarding: EAL, ports, table load (1M routes).
                            res["start_s"] = round(time.monotonic() - t_start, 2)
                            break
                    except (OSError, ValueError, KeyError, TypeError):
                        pass
                    if time.monotonic() > deadline:
                        res["error"] = "no packet forwarded within 180 s (see %s)" % rel(logf)
                        return res
                    time.sleep(0.05)
                time.sleep(self.warm if warm is None else warm)
                c0 = cpu_snapshot(p.pid, prefix) if json_path else None
                t0, a = time.monotonic(), sink_opackets(prefix, sink_port)
                time.sleep(self.window)
                t1, b = time.monotonic(), sink_opackets(prefix, sink_port)
                res.update(ok=True, mpps=(b - a) / (t1 - t0) / 1e6)
                if json_path:
                    # The planner's predictions from this run's costs, and what the
                    # lcores did per second of CPU they had (docs/scaling.md, 5).
                    res.update(free_cpu(c0, cpu_snapshot(p.pid, prefix), t1 - t0))
                    plan = telemetry(prefix, "/pipefwd/plan,cores=2,all=1,window=%g" %
                                     max(self.window, 0.5), timeout=5.0)
                    res["plan"] = plan.get("/pipefwd/plan", {})
            except (OSError, ValueError, KeyError, TypeError) as e:
                res["error"] = "telemetry: %s (see %s)" % (e, rel(logf))
            finally:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
                    try:
                        p.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
                        res.setdefault("warning", "killed after SIGINT timeout")
        # The route tables' own build time (lpm, lpm6 log "built in X s"): the part
        # of start_s that is the table, beside parsing and EAL.
        with open(logf, errors="replace") as lf:
            built = [float(x) for x in re.findall(r" built in ([\d.]+) s", lf.read())]
        if built:
            res["table_build_s"] = sum(built)
        if json_path:
            if p.returncode not in (0, -signal.SIGINT):
                res["warning"] = "pipefwd exit %d (see %s)" % (p.returncode, rel(logf))
            try:
                with open(json_path) as f:
                    st = json.load(f)
                res["json_mpps"] = st["totals"]["tx"] / st["seconds"] / 1e6
                res["tsc_hz"] = st["tsc_hz"]
                res["stages"] = {k: v["cycles_per_packet"] for k, v in st["stages"].items()}
                res["time_skipped"] = {k: v.get("time_skipped", 0) for k, v in st["stages"].items()}
                res["avg_burst"] = {k: round(v["packets"] / v["bursts"], 1)
                                    for k, v in st["stages"].items() if v["bursts"]}
                res["unaccounted"] = st["totals"]["unaccounted"]
            except (OSError, ValueError, KeyError, ZeroDivisionError) as e:
                res["warning"] = "no stats json: %s" % e
        return res

    def pf_runner(self, label, topo, binary=None):
        prefix = self.prefix + "_pf"
        js = os.path.join(self.out, "stats", label + ".json")
        cap = self.warm + self.window + 200
        cmd = [binary or self.pipefwd, "-q", "-d", "%g" % cap, "-j", js, topo, "--",
               "--file-prefix=" + prefix]
        return dict(label=label, cmd=cmd, prefix=prefix, json=js, topo=topo)

    def alternate(self, runners, rounds=None):
        """Run every runner once per round, in turn (A B C A B C ...)."""
        runs = {r["label"]: [] for r in runners}
        todo = runners
        for rnd in range(min(rounds or self.rounds, self.rounds)):
            for r in todo:
                res = self.run(r["label"], r["cmd"], r["prefix"], r.get("json"),
                               r.get("sink_port", 1), r.get("warm"))
                runs[r["label"]].append(res)
                log("  %-34s round %d: %s" % (r["label"], rnd + 1,
                                              "%.2f Mpps" % res["mpps"] if res["ok"] else
                                              "FAILED: " + res.get("error", "?")))
        return runs

    # -- aggregation --
    def show(self, a):
        """A path as the report shows it: relative to the checkout, BUILD as build/."""
        a = a.replace(self.build + "/", "build/")
        return a.replace(ROOT + "/", "")

    def summarize(self, runs, cmd=None, split=None, **extra):
        ok = [r for r in runs if r["ok"]]
        s = dict(extra)
        if cmd:
            s["command"] = " ".join(self.show(a) for a in cmd)
        s["runs"] = len(runs)
        s["mpps_runs"] = [round(r["mpps"], 3) for r in ok]
        if not ok:
            s["error"] = runs[0].get("error", "failed") if runs else "not run"
            return s
        s["mpps"] = round(median([r["mpps"] for r in ok]), 3)
        s["start_s"] = [r["start_s"] for r in ok if "start_s" in r]
        if any("table_build_s" in r for r in ok):
            s["table_build_s"] = [r["table_build_s"] for r in ok if "table_build_s" in r]
        s["spread_pct"] = round(spread([r["mpps"] for r in ok]), 1)
        if any("json_mpps" in r for r in ok):
            s["json_mpps"] = round(median([r["json_mpps"] for r in ok if "json_mpps" in r]), 3)
            stages = ok[0].get("stages", {})
            s["cycles_per_packet"] = {k: round(median([r["stages"][k] for r in ok
                                                       if k in r.get("stages", {})]), 1)
                                      for k in stages}
            s["avg_burst"] = ok[0].get("avg_burst", {})
            s["tsc_hz"] = ok[0].get("tsc_hz")
            if any(r.get("unaccounted") for r in ok):
                s["warning"] = "accounting mismatch in a run"
        if any(r.get("free_mpps") for r in ok):
            s["free_mpps"] = round(median([r["free_mpps"] for r in ok if r.get("free_mpps")]), 3)
            s["cpu_share"] = [r.get("cpu_share") for r in ok]
            s["lcore_free_mpps"] = [r.get("lcore_free_mpps") for r in ok]
            s["free_upper"] = any(r.get("free_upper") for r in ok)
            s["plan_io_cycles"] = median([r["plan"]["io_cycles_x10"] / 10.0 for r in ok
                                          if r.get("plan")])
        if split and any(r.get("plan") for r in ok):
            pred = [planned(r.get("plan", {}), split) for r in ok]
            s["predicted"] = {k: round(median([p[k] for p in pred if k in p]), 3)
                              for k in ("fused", "pipelined") if any(k in p for p in pred)}
            s["plan_stage_cycles"] = {k: round(median([r["plan"]["stages"][k]["cycles_x10"] / 10.0
                                                       for r in ok if r.get("plan")]), 1)
                                      for k in ok[-1].get("plan", {}).get("stages", {})}
        warns = [r["warning"] for r in runs if r.get("warning")]
        if warns:
            s["warning"] = warns[0]
        return s

    # -- the benchmark --
    def run_cases(self):
        results = []
        only = set(self.args.only.split(",")) if self.args.only else None
        for c in CASES:
            if only and c["name"] not in only or self.quick and not c["quick"] and not only:
                continue
            log("bench: case %s (%s, %s)" % (c["name"], c["title"], c["traffic"]))
            runners, meta = [], {}
            for layout in c["layouts"]:
                topo, lmap, pcap, t = self.topology(c, layout)
                err = self.check(topo)
                if err:
                    log("  skip pipefwd %s: %s" % (layout, err))
                    meta[layout] = dict(skipped=err, topology=rel(topo))
                    continue
                r = self.pf_runner("%s-%s" % (c["name"], layout), topo)
                meta[layout] = dict(topology=self.show(topo), lcores=lmap)
                runners.append(r)
            for peer in [] if self.args.no_peers else c["peers"]:
                try:
                    cmd, prefix = self.peer_cmd(peer, pcap, t, c["tables"])
                except (RuntimeError, subprocess.CalledProcessError) as e:
                    meta[peer] = dict(skipped=str(e))
                    continue
                runners.append(dict(label="%s-%s" % (c["name"], peer), cmd=cmd, prefix=prefix,
                                    peer=peer, sink_port=PEERS[peer].get("sink_port", 1),
                                    warm=PEERS[peer].get("warmup_s")))
            runs = self.alternate(runners, c["rounds"])
            row = dict(case=c["name"], title=c["title"], traffic=c["traffic"],
                       tables=c["tables"], burst=32, pipefwd={}, peers={})
            for r in runners:
                if "peer" in r:
                    row["peers"][r["peer"]] = self.summarize(runs[r["label"]], r["cmd"],
                                                             desc=PEERS[r["peer"]]["desc"])
                else:
                    layout = r["label"].rsplit("-", 1)[1]
                    split = {str(i + 1): g for i, g in enumerate(c["topo"]["split"])}
                    row["pipefwd"][layout] = self.summarize(runs[r["label"]], r["cmd"],
                                                            split=split, **meta[layout])
            for layout in ("fused", "pipelined"):
                if layout in meta and "skipped" in meta[layout]:
                    row["pipefwd"][layout] = meta[layout]
            for peer in c["peers"]:
                if peer in meta:
                    row["peers"][peer] = meta[peer]
            if all("skipped" in meta.get(lay, {}) for lay in ("fused", "pipelined")):
                row["skipped"] = meta["fused"]["skipped"]
            self.ratios(row)
            results.append(row)
        return results

    @staticmethod
    def ratios(row):
        f = row["pipefwd"].get("fused", {})
        pl = row["pipefwd"].get("pipelined", {})
        if row["peers"]:
            first = list(row["peers"])[0]
            pm = row["peers"][first].get("mpps")
            row["peer"] = first
            row["peer_mpps"] = pm
            if pm and f.get("mpps"):
                row["ratio_fused"] = round(f["mpps"] / pm, 3)
            if pm and pl.get("mpps"):
                row["ratio_pipelined"] = round(pl["mpps"] / pm, 3)
        else:
            row["peer"] = None
        # The planner: each layout predicted from its own run and from the other's,
        # against what it did per second of CPU (free_mpps) and on the wall clock.
        pred = {}
        for lay, m in (("fused", f), ("pipelined", pl)):
            if not m.get("mpps"):
                continue
            pred[lay] = dict(wall_mpps=m["mpps"], free_mpps=m.get("free_mpps"),
                             free_upper=m.get("free_upper", False),
                             from_fused=f.get("predicted", {}).get(lay),
                             from_pipelined=pl.get("predicted", {}).get(lay))
        if pred:
            row["prediction"] = pred
            for lay, v in pred.items():
                log("  %-9s wall %.2f Mpps, per CPU second %s%s; planner from fused run %s, "
                    "from pipelined run %s" % (lay, v["wall_mpps"],
                                               "at most " if v["free_upper"] else "",
                                               fmt(v["free_mpps"]),
                                               fmt(v["from_fused"]), fmt(v["from_pipelined"])))
        cf, cp = f.get("cycles_per_packet"), pl.get("cycles_per_packet")
        if cf and cp:
            # Ring hand-off: stage cycles in the pipelined layout over fused, per
            # edge that crosses lcores (the split adds exactly one such edge).
            row["handoff_cycles_per_edge"] = round(sum(cp.values()) - sum(cf.values()), 1)

    def run_sweeps(self):
        out = []
        only = set(self.args.only.split(",")) if self.args.only else None
        for sw in SWEEPS:
            if only and sw["name"] not in only:
                continue
            if self.quick and not only:
                if sw["name"] != "burst":
                    continue
                values = [8, 32, 128]
            else:
                values = sw["values"]
            c = next(x for x in CASES if x["name"] == sw["base"])
            log("bench: sweep %s over %s" % (sw["name"], values))
            runners, points = [], []
            for v in values:
                tables = dict(c["tables"])
                burst = 32
                if sw["key"] == "burst":
                    burst = v
                else:
                    tables[sw["key"]] = v
                topo, lmap, _, _ = self.topology(c, "fused", burst=burst, tables=tables)
                err = self.check(topo)
                if err:
                    log("  skip %s=%s: %s" % (sw["key"], v, err))
                    points.append(dict(value=v, skipped=err))
                    continue
                r = self.pf_runner("%s-%s-%d" % (sw["name"], c["name"], v), topo)
                r["value"] = v
                runners.append(r)
            runs = self.alternate(runners, 3) if runners else {}
            for r in runners:
                s = self.summarize(runs[r["label"]], r["cmd"], value=r["value"])
                points.append(s)
            points.sort(key=lambda p: p["value"])
            out.append(dict(name=sw["name"], base=sw["base"], key=sw["key"], title=sw["title"],
                            stage=sw["stage"], points=points))
        return out

    def run_scaling(self):
        """Rx on two queues, one lcore against two (scripts/bench_rxq.py's
        layouts: one, inst, affine, split, alternated), with the planner's
        rss-affine and rss-fanout predicted from one's runs. Not in the quick
        set; `--only scaling` runs it alone."""
        only = set(self.args.only.split(",")) if self.args.only else None
        if (only and "scaling" not in only) or (self.quick and not only):
            return None
        import bench_rxq
        workers = CPU_MAP[1:]
        pin = ",".join(["0@%d" % CPU_MAP[0]] + ["%d@%d" % (i + 1, workers[i % len(workers)])
                                                for i in range(2)])
        log("bench: scaling (rx on two queues: one lcore, a flow-hash fan-out, affine, two "
            "pipelines), %d rounds, lcores %s" % (self.rounds, pin))
        return bench_rxq.measure(self.pipefwd, self.rounds, 4, True, pin=pin,
                                 log=lambda m: log("  " + m))

    def main(self):
        t0 = time.monotonic()
        if not os.access(self.pipefwd, os.X_OK):
            sys.exit("bench: %s not built (run make build)" % self.pipefwd)
        results = dict(
            date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            commit=git_commit(os.path.dirname(self.build)), note=self.args.note,
            harness_commit=git_commit(), quick=self.quick, rounds=self.rounds, warmup_s=self.warm,
            window_s=self.window, machine=machine(), traffic=TRAFFIC,
            l3fwd_patches=[dict(file=f, sed=e) for f, e in L3FWD_PATCHES],
            l3fwd_graph_patches=[dict(file=f, sed=e) for f, e in L3FWD_GRAPH_PATCHES],
            file_prefix=self.prefix)
        results["cases"] = self.run_cases()
        results["sweeps"] = self.run_sweeps()
        results["scaling"] = self.run_scaling()
        tsc = [p.get("tsc_hz") for r in results["cases"] for p in r.get("pipefwd", {}).values()
               if p.get("tsc_hz")]
        results["tsc_hz"] = tsc[0] if tsc else None
        results["elapsed_s"] = round(time.monotonic() - t0, 1)
        path = os.path.join(self.out, "results.json")
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
        log("bench: wrote %s (%.0f s)" % (rel(path), results["elapsed_s"]))
        print_table(results)
        if not self.args.no_report:
            report(results, self.out, report_doc(self.out, self.args.write_report))


def TRAFFIC_FRAMES(pcap):
    n, f = 0, open(pcap, "rb")
    f.read(24)
    while True:
        h = f.read(16)
        if len(h) < 16:
            break
        f.seek(struct.unpack("<IIII", h)[2], 1)
        n += 1
    f.close()
    return n


def machine():
    m = {}
    try:
        for ln in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            k, _, v = ln.partition(":")
            if k.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
                             "Hypervisor vendor", "L1d cache", "L2 cache", "L3 cache",
                             "CPU max MHz", "BogoMIPS"):
                m[k.strip()] = v.strip()
    except FileNotFoundError:
        pass
    m["kernel"] = platform.release()
    try:
        m["dpdk"] = subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True,
                                   text=True).stdout.strip()
    except FileNotFoundError:
        pass
    try:
        m["load_avg_at_start"] = os.getloadavg()[0]
    except OSError:
        pass
    return m


def fmt(x, f="%.2f"):
    return f % x if isinstance(x, (int, float)) else "-"


def print_table(res):
    log("\n%-12s %-9s %9s %6s %-12s %9s %7s" % ("case", "layout", "Mpps", "+-%", "peer",
                                                 "peer Mpps", "ratio"))
    for r in res["cases"]:
        if "skipped" in r:
            log("%-12s skipped: %s (peer %s: %s Mpps)" % (r["case"], r["skipped"], r.get("peer"),
                                                         fmt(r.get("peer_mpps"))))
            continue
        for layout in ("fused", "pipelined"):
            p = r["pipefwd"].get(layout, {})
            log("%-12s %-9s %9s %6s %-12s %9s %7s" % (
                r["case"], layout, fmt(p.get("mpps")), fmt(p.get("spread_pct"), "%.0f"),
                r.get("peer") or "none", fmt(r.get("peer_mpps")),
                fmt(r.get("ratio_" + layout), "%.2fx")))
    for r in res["cases"]:
        for who, p in list(r["pipefwd"].items()) + list(r["peers"].items()):
            if p.get("start_s"):
                log("%-12s %-12s start to forwarding: %s s%s" % (
                    r["case"], who, " ".join("%.1f" % x for x in p["start_s"]),
                    " (table built in %s s)" % " ".join("%.1f" % x for x in p["table_build_s"])
                    if p.get("table_build_s") else ""))
    for sw in res["sweeps"]:
        log("sweep %s: %s" % (sw["name"], ", ".join(
            "%s=%s" % (p["value"], fmt(p.get("mpps"))) for p in sw["points"])))
    sc = res.get("scaling")
    for name, v in (sc or {}).get("layouts", {}).items():
        log("scaling %-6s %s Mpps, %s one; per CPU second %s" % (
            name, fmt(v.get("median")), fmt(v.get("vs_one"), "%.2fx"),
            fmt(v.get("cpu_vs_one"), "%.2fx one")))
    for kind, v in (sc or {}).get("planner", {}).items():
        log("scaling planner %s %s Mpps against %s measured (%s): %+.0f %%" % (
            kind, fmt(v["median"]), v["layout"], fmt(v["measured"]), v["error_pct"]))


from bench_report import report, report_doc  # noqa: E402  (the Markdown and gnuplot half)


def compare(args):
    """Build REF beside the current build, run the quick cases alternately."""
    b = Bench(args)
    base = os.path.join(b.out, "base")
    src, bld = os.path.join(base, "src"), os.path.join(base, "build")
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", args.compare], capture_output=True,
                         text=True, check=True).stdout.strip()
    stamp = os.path.join(base, "rev")
    if not (os.path.exists(stamp) and open(stamp).read() == rev):
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(src)
        log("bench-compare: building %s (%s) in %s" % (args.compare, rev[:12], rel(base)))
        arch = subprocess.Popen(["git", "-C", ROOT, "archive", rev], stdout=subprocess.PIPE)
        sh(["tar", "-x", "-C", src], stdin=arch.stdout)
        arch.wait()
        sh(["meson", "setup", bld, src, "-Dwerror=false"], stdout=subprocess.DEVNULL)
        sh(["ninja", "-C", bld], stdout=subprocess.DEVNULL)
        with open(stamp, "w") as f:
            f.write(rev)
    base_bin = os.path.join(bld, "app", "pipefwd")
    rows, slower = [], []
    for c in CASES:
        if not (c["name"] in args.only.split(",") if args.only else c["quick"]):
            continue
        for layout in ("fused", "pipelined"):
            topo, _, _, _ = b.topology(c, layout)
            if b.check(topo) or b.check(topo, base_bin):
                log("bench-compare: skip %s %s (a build rejects the topology)" % (c["name"], layout))
                continue
            rb = b.pf_runner("cmp-%s-%s-base" % (c["name"], layout), topo, base_bin)
            rc = b.pf_runner("cmp-%s-%s-head" % (c["name"], layout), topo)
            runs = b.alternate([rb, rc])
            sb, sc = b.summarize(runs[rb["label"]]), b.summarize(runs[rc["label"]])
            row = dict(case=c["name"], layout=layout, base_mpps=sb.get("mpps"),
                       head_mpps=sc.get("mpps"), base_runs=sb["mpps_runs"],
                       head_runs=sc["mpps_runs"],
                       base_cycles=sb.get("cycles_per_packet"),
                       head_cycles=sc.get("cycles_per_packet"))
            # Paired: each head run against the base run just before it, so a
            # load change between rounds cancels out; the median of the pairs decides.
            pairs = [h["mpps"] / a["mpps"] for a, h in zip(runs[rb["label"]], runs[rc["label"]])
                     if a["ok"] and h["ok"] and a["mpps"] > 0]
            if pairs:
                ratio = median(pairs)
                row["paired_ratios"] = [round(x, 3) for x in pairs]
                row["change_pct"] = round(100.0 * (ratio - 1), 1)
                row["slower"] = ratio < 0.95
                if row["slower"]:
                    slower.append(row)
            rows.append(row)
    log("\n%-10s %-9s %10s %10s %8s" % ("case", "layout", args.compare[:10], "HEAD",
                                        "change (median of paired runs)"))
    for r in rows:
        log("%-10s %-9s %10s %10s %7s%% %s" % (r["case"], r["layout"], fmt(r["base_mpps"]),
                                               fmt(r["head_mpps"]), fmt(r.get("change_pct"), "%+.1f"),
                                               "SLOWER" if r.get("slower") else ""))
    # Stage cycles per packet (medians): load-robust where Mpps is not (preempted
    # intervals are not charged), and the hand-off per edge from them.
    log("\nstage cycles per packet, %s -> HEAD:" % args.compare[:10])
    by = {(r["case"], r["layout"]): r for r in rows}
    for r in rows:
        bc, hc = r.get("base_cycles") or {}, r.get("head_cycles") or {}
        log("%-10s %-9s %s" % (r["case"], r["layout"], ", ".join(
            "%s %s -> %s" % (k, fmt(bc.get(k), "%.1f"), fmt(hc.get(k), "%.1f")) for k in hc)))
        f = by.get((r["case"], "fused"))
        if r["layout"] == "pipelined" and f and f.get("base_cycles") and f.get("head_cycles"):
            for side in ("base", "head"):
                cp, cf = r.get(side + "_cycles"), f.get(side + "_cycles")
                if cp and cf:
                    r[side + "_handoff"] = round(sum(cp.values()) - sum(cf.values()), 1)
            log("%-10s hand-off cycles per edge %s -> %s" % (
                r["case"], fmt(r.get("base_handoff"), "%.1f"), fmt(r.get("head_handoff"), "%.1f")))
    out = dict(base=args.compare, base_rev=rev, head=git_commit(), rows=rows,
               date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"))
    with open(os.path.join(b.out, "compare.json"), "w") as f:
        json.dump(out, f, indent=1)
    if slower:
        log("bench-compare: %d case(s) more than 5%% slower than %s" % (len(slower), args.compare))
        return 1
    log("bench-compare: no case more than 5% slower than " + args.compare)
    return 0


def main():
    # Benchmarks measure polling lcores, as the peers poll: no idle sleep
    # (runtime.idle_sleep_us) inherited from a test harness's environment.
    os.environ.pop("PIPEFWD_IDLE_SLEEP_US", None)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--quick", action="store_true", help="the CI set: fewer cases, short runs")
    ap.add_argument("--only", help="comma-separated case or sweep names")
    ap.add_argument("--rounds", type=int, help="alternations per case (default 5, quick 3)")
    ap.add_argument("--compare", metavar="REF", help="compare the quick set against git REF")
    ap.add_argument("--no-report", action="store_true", help="write no report")
    ap.add_argument("--write-report", action="store_true", help="rewrite the tracked "
                    "docs/benchmarks.md and docs/img/ (default: BUILD/bench/report/)")
    ap.add_argument("--no-peers", action="store_true", help="pipefwd's layouts only")
    ap.add_argument("--note", help="one line on what was measured, shown in the report")
    ap.add_argument("--file-prefix", default="bench",
                    help="DPDK --file-prefix base for every run (default bench)")
    ap.add_argument("--cpus", metavar="MAIN,W1[,W2...]",
                    help="the CPU map: the main lcore's CPU, then the workers' in order "
                    "(peers use MAIN and W1); default 0 and the last CPUs counting down. "
                    "On a machine with isolated CPUs name them here (docs/scaling.md)")
    args = ap.parse_args()
    global CPU_MAP
    if args.cpus:
        try:
            CPU_MAP = [int(c) for c in args.cpus.split(",")]
        except ValueError:
            ap.error("--cpus: a comma-separated list of CPU numbers")
        bad = [c for c in CPU_MAP if c not in os.sched_getaffinity(0)]
        if len(CPU_MAP) < 2 or bad:
            ap.error("--cpus: at least two CPUs this process may run on (not %s)" % bad)
    if args.compare:
        args.quick = True
        return compare(args)
    Bench(args).main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
