#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drop capture by reason: pipefwd-ctl capture drop[:REASON] against a running pipefwd.

rx (p0) -> acl -> lpm -> tx (p1, net_null) on one lcore; p0 replays forever
2 routed frames and 3 bad ones, each dropped for a known reason: IPv4 TTL 1
(lpm:ip4_ttl_expired), a bad IPv4 header checksum (rx:ip4_bad_checksum) and
TCP to port 23, which the ACL denies (acl:acl_deny). The capture files are
read back with scapy (and the project's pcapng reader): every packet must be one of the bad frames
byte for byte (as scapy built it) with its reason in the packet comment, and
a capture of one reason holds that reason's frame only. Forwarding does not
notice: at exit nothing is unaccounted and no mbuf leaked.

usage: test_capture_drop.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from scapy.all import IP, TCP, UDP, Ether, Raw, raw, rdpcap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapng  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))
from pftest import finish, write_pcap  # noqa: E402

PIPEFWD, CTL = sys.argv[1], sys.argv[2]
PREFIX = "capdrop_t%d" % os.getpid()
FAILS = []

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/p0.pcap,infinite_rx=1", mac: "02:00:00:00:00:10", ipv4: 192.168.0.1/24 }}
  p1: {{ device: "net_null0", mac: "02:00:00:00:00:11", ipv4: 10.1.0.254/16 }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: acl }} }}
  acl: {{ type: acl, default: permit, rules: [deny proto tcp dport 23], next: lpm }}
  lpm:
    type: lpm
    nexthops: {{ gw: {{ port: p1, mac: "02:00:00:00:00:0b" }} }}
    routes: [{{ prefix: 10.1.0.0/16, via: gw }}]
    next: tx
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, acl, lpm, tx]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def model():
    """(frames, {frame bytes: the reason pipefwd must give}) of the replayed file."""
    def pkt(dst, ttl, l4):
        return Ether(raw(Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:10") /
                         IP(src="192.168.0.2", dst=dst, ttl=ttl) / l4 / Raw(b"d" * 20)))
    good = [pkt("10.1.0.%d" % i, 64, UDP(sport=i, dport=53)) for i in (1, 2)]
    ttl1 = pkt("10.1.0.3", 1, UDP(sport=3, dport=53))
    bad_sum = pkt("10.1.0.4", 9, UDP(sport=4, dport=53))
    bad_sum[IP].chksum ^= 0x0f0f
    telnet = pkt("10.1.0.5", 9, TCP(sport=5, dport=23))
    frames = [raw(p) for p in (good[0], ttl1, good[1], bad_sum, telnet)]
    return frames, {raw(ttl1): "lpm:ip4_ttl_expired", raw(bad_sum): "rx:ip4_bad_checksum",
                    raw(telnet): "acl:acl_deny"}


def ctl(*args):
    return subprocess.run([CTL, "--file-prefix", PREFIX] + list(args), capture_output=True,
                          text=True, timeout=120)


def capture(tmp, target, count, name):
    """The packets of a drop capture as scapy reads them: data and comment."""
    r = ctl("capture", target, "-c", str(count), "-w", name, "--wait", "60")
    if not check(r.returncode == 0, "capture %s: rc %d %s%s" % (target, r.returncode, r.stdout,
                                                              r.stderr)):
        return []
    path = os.path.join(tmp, name)
    own = pcapng.read(path)["packets"]
    pkts = [{"data": raw(p), "comments": [p.comment.decode()] if p.comment else [],
             "len": p.wirelen} for p in rdpcap(path)]
    # The project's reader sees the same comments (with the final newline).
    check([[c.rstrip("\n") for c in p["comments"]] for p in own] ==
          [p["comments"] for p in pkts], "%s: pcapng.py and scapy disagree" % name)
    return pkts


def main():
    tmp = tempfile.mkdtemp(prefix="pf_capdrop_")
    frames, reasons = model()
    write_pcap(os.path.join(tmp, "p0.pcap"), frames)
    topo = os.path.join(tmp, "topo.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp))
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    stats = os.path.join(tmp, "stats.json")
    proc = subprocess.Popen([PIPEFWD, "-q", "-d", "400", "-j", stats, "--capture-dir", tmp, topo,
                             "--", "--file-prefix=" + PREFIX], stdout=log, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and ctl("totals").returncode != 0:
            time.sleep(0.2)
        pkts = capture(tmp, "drop", 40, "all.pcapng")
        check(len(pkts) == 40, "capture drop: %d packets, want 40" % len(pkts))
        got = set()
        for p in pkts:
            want = reasons.get(p["data"])
            if check(want is not None, "captured a frame that is not dropped: %s" %
                     p["data"].hex()):
                got.add(want)
                check(p["comments"] == [want] and p["len"] == len(p["data"]),
                      "frame for %s has comments %s" % (want, p["comments"]))
        check(got == set(reasons.values()), "every reason in 40 drops (a burst of 32 holds each): %s" % sorted(got))
        for target, want in (("drop:acl_deny", "acl:acl_deny"),
                             ("drop:ip4_ttl_expired", "lpm:ip4_ttl_expired"),
                             ("drop:rx:ip4_bad_checksum", "rx:ip4_bad_checksum")):
            name = target.replace(":", "_") + ".pcapng"
            pkts = capture(tmp, target, 3, name)
            check(len(pkts) == 3 and all(reasons.get(p["data"]) == want and
                                         p["comments"] == [want] for p in pkts),
                  "%s: %s" % (target, [(reasons.get(p["data"]), p["comments"]) for p in pkts]))
            shb = pcapng.read(os.path.join(tmp, name))["shb"]["comments"]
            check(shb and shb[0].startswith("pipefwd capture of %s" % target), "SHB %s" % shb)
        for target in ("drop:nosuch", "drop:lpm:acl_deny"):
            r = ctl("capture", target, "-c", "1", "-w", "x.pcapng")
            check(r.returncode == 1 and "no stage drops for that reason" in r.stderr and
                  "Traceback" not in r.stderr, "%s: %r" % (target, r.stderr))
    finally:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=120)
        log.close()
    check(rc == 0, "pipefwd exited %d" % rc)
    st = json.load(open(stats))
    check(st["totals"]["unaccounted"] == 0 and st["mbufs_in_use_after_stop"] == 0,
          "accounting at exit: %s, mbufs %s" % (st["totals"], st["mbufs_in_use_after_stop"]))
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
