#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Learnt state survives ports added and removed live (issue 33 item 2).

Three sources play once and stop, so what they taught can only be kept, never
learnt again:
 - p2 (a bridge, l2fib) carries 16 broadcast frames from 16 source MACs: 16
   learnt MACs on p2;
 - p0 (the LAN) sends 8 UDP flows from 192.168.0.2 to 10.1.0.7 through a
   stateful acl (permit-reflect): 8 sessions;
 - p1 (the lab) sends one ARP request from host 10.1.0.9 for the router's
   address: a neighbour, learnt from a request aimed at us (neigh_learned 1).
Then, with those tables filled: `port-add p4` (tx only), `port-del p4`, a
reload that adds p5 to the bridge's rx, l2fib and tx stages, and a reload back
without it. After each change the learnt MACs (address, port), the sessions
(their 5-tuples) and the neighbour (address, MAC) must be exactly those of
before, and neigh_learned still 1. At exit: every frame accounted for.

usage: test_port_live_state.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from pftest import (Ctl, checker, dpdk_rundir, finish, stop_pipefwd, telemetry,  # noqa: E402
                    write_atomic)

from scapy.all import ARP, IP, UDP, Ether, wrpcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "cportstate_%d" % os.getpid()
FAILS = []
check = checker(FAILS)
P0, P1, H = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:09:09"

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/lan.pcap,tx_pcap={tmp}/p0.pcap", mac: "{p0}",
        ipv4: 192.168.0.1/24 }}
  p1: {{ device: "net_pcap1,rx_pcap={tmp}/lab.pcap,tx_pcap={tmp}/p1.pcap", mac: "{p1}",
        ipv4: 10.1.0.254/16 }}
  p2: {{ device: "net_pcap2,rx_pcap={tmp}/l2.pcap,tx_pcap={tmp}/p2.pcap" }}
  p3: {{ device: "net_pcap3,tx_pcap={tmp}/p3.pcap" }}
{p5}stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: acl, arp: nb }} }}
  acl:
    type: acl
    default: deny
    rules:
      - permit-reflect src 192.168.0.0/24
    next: lpm
  lpm:
    type: lpm
    nexthops:
      gw: {{ port: p1, mac: "02:00:00:00:00:0b" }}
    routes:
      - {{ prefix: 10.1.0.0/16, via: gw }}
    next: {{ out: tx, neigh: nb }}
  nb: {{ type: neigh, next: tx }}
  rx_l2: {{ type: rx, ports: [p2{p5_list}], next: l2 }}
  l2: {{ type: l2fib, ports: [p2, p3{p5_list}], next: tx }}
  tx: {{ type: tx, ports: [p0, p1, p2, p3{p5_list}] }}
runtime: {{ mbufs: 32768 }}
lcores:
  1: [rx, acl, lpm, nb, rx_l2, l2, tx]
"""


def topo(tmp, p5=False):
    return TOPO.format(tmp=tmp, p0=P0, p1=P1,
                       p5='  p5: {{ device: "net_pcap5,tx_pcap={}/p5.pcap" }}\n'.format(tmp)
                       if p5 else "", p5_list=", p5" if p5 else "")


ctl = Ctl(CTL, PREFIX, check)


def tel(cmd):
    try:
        return telemetry(os.path.join(dpdk_rundir(PREFIX), "dpdk_telemetry.v2"), cmd, 20)
    except (OSError, ValueError):
        return None


def wait_for(cond, what, secs=20.0):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return check(False, "timed out waiting for " + what)


def learnt():
    """What the tables learnt, in a form two snapshots compare by."""
    macs = ctl.json("macs", "l2", "--all").get("rows", [])
    sess = ctl.json("sessions", "acl", "--all").get("rows", [])
    neigh = ctl.json("neighbors", "nb", "--all").get("rows", [])
    gauges = (tel("/pipefwd/stages") or {}).get("nb", {})
    return {
        "macs": sorted((r["mac"], r["port"]) for r in macs if r.get("type") == "learned"),
        "sessions": sorted((r.get("proto"), r.get("initiator"), r.get("responder"))
                           for r in sess),
        "neighbours": sorted((r.get("address"), r.get("port"), r.get("mac")) for r in neigh),
        "neigh_learned": gauges.get("counters", {}).get("neigh_learned"),
    }


def inputs(tmp):
    l2 = [Ether(src="02:20:00:00:00:%02x" % i, dst="ff:ff:ff:ff:ff:ff") /
          IP(src="10.9.0.%d" % (i + 1), dst="10.9.0.255") / UDP(sport=5000, dport=5000) /
          bytes(18) for i in range(16)]
    lan = [Ether(src="02:00:00:00:0a:02", dst=P0) /
           IP(src="192.168.0.2", dst="10.1.0.7", ttl=64) / UDP(sport=40000 + i, dport=53) /
           bytes(18) for i in range(8)]
    lab = [Ether(src=H, dst="ff:ff:ff:ff:ff:ff") /
           ARP(op=1, hwsrc=H, psrc="10.1.0.9", hwdst="00:00:00:00:00:00", pdst="10.1.0.254")]
    wrpcap(os.path.join(tmp, "l2.pcap"), l2)
    wrpcap(os.path.join(tmp, "lan.pcap"), lan)
    wrpcap(os.path.join(tmp, "lab.pcap"), lab)
    return len(l2) + len(lan) + len(lab)


def same(before, what):
    now = learnt()
    for k in before:
        check(now[k] == before[k], "%s: %s now %s, were %s" % (what, k, now[k], before[k]))


def run(tmp, path, n_in):
    if not wait_for(lambda: (tel("/pipefwd/totals") or {}).get("rx", 0) == n_in,
                    "the %d input frames read" % n_in):
        return
    # The tables as the inputs filled them: the check of what a change must keep.
    wait_for(lambda: len(learnt()["macs"]) == 16 and len(learnt()["sessions"]) == 8 and
             learnt()["neighbours"] != [], "16 MACs, 8 sessions and a neighbour learnt")
    before = learnt()
    check(before["macs"] == sorted(("02:20:00:00:00:%02x" % i, "p2") for i in range(16)),
          "learnt MACs: %s" % before["macs"])
    check(before["sessions"] == sorted((17, "192.168.0.2:%d" % (40000 + i), "10.1.0.7:53")
                                       for i in range(8)), "sessions: %s" % before["sessions"])
    check(before["neighbours"] == [("10.1.0.9", "p1", H)], "neighbours: %s" % before["neighbours"])
    check(before["neigh_learned"] == 1, "neigh_learned %s" % before["neigh_learned"])

    r = ctl("port-add", "p4", "net_pcap4,tx_pcap=%s/p4.pcap" % tmp, "tx=tx")
    check("port p4 added" in r.stdout, "port-add p4: %r" % r.stdout)
    same(before, "after port-add p4")
    r = ctl("port-del", "p4")
    check("port p4 removed" in r.stdout, "port-del p4: %r" % r.stdout)
    same(before, "after port-del p4")

    time.sleep(1.1)    # a file rewritten in the second it was loaded looks unchanged
    write_atomic(path, topo(tmp, p5=True))
    r = ctl("reload")
    check("1 ports added, 0 removed" in r.stdout or "1 port added, 0 removed" in r.stdout,
          "reload adding p5 to the bridge: %r" % r.stdout)
    same(before, "after the reload adding p5 to rx_l2, l2 and tx")
    time.sleep(1.1)
    write_atomic(path, topo(tmp))
    r = ctl("reload")
    check("0 ports added, 1 removed" in r.stdout or "0 ports added, 1 port removed" in r.stdout,
          "reload removing p5: %r" % r.stdout)
    same(before, "after the reload removing p5")


def main():
    tmp = tempfile.mkdtemp(prefix="pf_portstate_")
    n_in = inputs(tmp)
    path = os.path.join(tmp, "state.yaml")
    write_atomic(path, topo(tmp))
    stats = os.path.join(tmp, "stats.json")
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-j", stats, path, "--", "--file-prefix=" + PREFIX],
                            stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    try:
        run(tmp, path, n_in)
    finally:
        rc = stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
    out = open(os.path.join(tmp, "pipefwd.log")).read()
    check(rc == 0, "pipefwd exit %d:\n%s" % (rc, out[-2000:]))
    if rc == 0:
        tot = json.load(open(stats))["totals"]
        check(tot["rx"] == n_in and tot["unaccounted"] == 0,
              "totals %s, %d frames sent" % (tot, n_in))
    if FAILS:
        print(out[-3000:])
    else:
        print("ok: MACs, sessions and a neighbour kept across port-add, port-del and two reloads")
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
