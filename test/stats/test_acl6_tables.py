#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The acl stage's tables with IPv6 beside IPv4 (pipefwd-ctl acl and
sessions, /pipefwd/table,acl,rules|sessions) on a running pipefwd fed by a
finite pcap: IPv6 rules shown with their prefixes, per-rule hits counted
for both families, IPv6 sessions shown as [address]:port. Every expected
row is computed from the inputs written here.

usage: test_acl6_tables.py PIPEFWD PIPEFWD_CTL
"""
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import IP, IPv6, TCP, UDP, Ether, Raw, wrpcap  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import dpdk_rundir, stop_pipefwd  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "acl6_tables_%d" % os.getpid()
FAILS = []
TOPO = """\
eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/in.pcap" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: acl, ipv6: acl }} }}
  acl:
    type: acl
    rules:
      - "deny src 2001:db8:66::/48"
      - "permit-reflect src 2001:db8::/32 proto udp dport 53"
      - "permit-reflect src 10.0.0.0/8 proto udp"
      - "permit proto tcp dport 80"
    default: deny
    sessions: 64
    next: xc
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, acl, xc, tx]
"""
# The rules above as the tables print them (docs/stages/acl.md): a family's
# missing address is its /0, a rule of no family says "any".
TEXT = {
    1: "deny src 2001:db8:66::/48 dst ::/0 proto any sport 0-65535 dport 0-65535 priority 0",
    2: "permit-reflect src 2001:db8::/32 dst ::/0 proto 17 sport 0-65535 dport 53-53 priority 0",
    3: "permit-reflect src 10.0.0.0/8 dst 0.0.0.0/0 proto 17 sport 0-65535 dport 0-65535 "
       "priority 0",
    4: "permit src any dst any proto 6 sport 0-65535 dport 80-80 priority 0",
}


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def frames():
    """(frames, hits per rule (0: default), sessions as (initiator, responder))."""
    eth = Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b")
    out, hits, sess = [], {0: 0, 1: 0, 2: 0, 3: 0, 4: 0}, set()
    for k in range(3):
        out.append(eth / IPv6(src="2001:db8:66::%x" % (k + 1), dst="2001:db8:1::1") /
                   UDP(sport=5, dport=53))
        hits[1] += 1
    for h in range(1, 6):               # rule 2 opens a session, the reply rides on it
        c, s = "2001:db8:1::%x" % h, "2001:db8:ff::53"
        out.append(eth / IPv6(src=c, dst=s) / UDP(sport=1000 + h, dport=53) / Raw(b"q"))
        out.append(eth / IPv6(src=s, dst=c) / UDP(sport=53, dport=1000 + h) / Raw(b"a"))
        hits[2] += 1
        sess.add(("[%s]:%d" % (c, 1000 + h), "[%s]:53" % s))
    for h in range(1, 3):               # rule 3, IPv4
        out.append(eth / IP(src="10.0.0.%d" % h, dst="8.8.8.8") / UDP(sport=2000 + h, dport=53))
        hits[3] += 1
        sess.add(("10.0.0.%d:%d" % (h, 2000 + h), "8.8.8.8:53"))
    out.append(eth / IPv6(src="2001:db9::1", dst="2001:db8:1::1") / TCP(dport=80))
    out.append(eth / IP(src="192.0.2.1", dst="10.0.0.1") / TCP(dport=80))
    hits[4] += 2
    out.append(eth / IPv6(src="2001:db9::1", dst="2001:db8:1::1") / UDP(dport=54))
    hits[0] += 1
    return out, hits, sess


def ctl_json(*args):
    r = subprocess.run([CTL, "--file-prefix", PREFIX, "--json"] + list(args),
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def wait_idle(n):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        t = ctl_json("totals")
        if t.get("rx", 0) == n and t.get("in_flight", 1) == 0:
            return True
        time.sleep(0.2)
    return False


def run(tmp):
    pkts, hits, sess = frames()
    wrpcap(os.path.join(tmp, "in.pcap"), pkts)
    topo = os.path.join(tmp, "acl6.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp))
    log = open(os.path.join(tmp, "acl6.log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-q", topo, "--", "--file-prefix=" + PREFIX], stdout=log,
                            stderr=subprocess.STDOUT)
    rundir = dpdk_rundir(PREFIX)
    try:
        if not check(wait_idle(len(pkts)), "pipefwd never took all %d frames" % len(pkts)):
            return
        j = ctl_json("acl", "acl")
        got = [(r["rule"], r["hits"], r["text"]) for r in j.get("rows", [])]
        want = [(k, hits[k], TEXT[k]) for k in (1, 2, 3, 4)]
        check(got == want, "acl rules: %s, want %s" % (got, want))
        check(j.get("default_hits") == hits[0], "acl default: %s" % j)
        j = ctl_json("sessions", "acl")
        got = {(r["initiator"], r["responder"]) for r in j.get("rows", [])}
        check(got == sess, "sessions: %s, want %s" % (sorted(got), sorted(sess)))
        check(all(r["proto"] == 17 and r["state"] == "open" for r in j.get("rows", [])),
              "session fields: %s" % j.get("rows"))
        g = ctl_json("stages", "acl").get("acl", {}).get("gauges", {})
        check(g.get("acl6_contexts") == 1 and g.get("acl_contexts") == 1 and
              g.get("sessions") == len(sess), "gauges: %s" % g)
    finally:
        rc = stop_pipefwd(proc, log, rundir)
    check(rc == 0, "pipefwd exit %d" % rc)


def main():
    tmp = tempfile.mkdtemp(prefix="pf_acl6_tables_")
    try:
        run(tmp)
    finally:
        if not FAILS:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept " + tmp)
    print("%s: %d failures" % (os.path.basename(__file__), len(FAILS)))
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
