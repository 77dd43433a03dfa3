#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""BIRD drives pipefwd through the kernel table (issue 30 item 8 c).

    /usr/bin/python3 test/netns/routing_bird.py --pipefwd build/app/pipefwd

pipefwd runs in its own namespace (PFX+"w") with three net_tap ports: p0 to
router A (10.1.0.2), p1 to router B (10.2.0.2), p2 to a client C (10.3.0.2).
The router's BIRD runs in the host namespace PFX+"r" (the host stage's
interfaces p0..p2): OSPF with A over p0 (hellos to 224.0.0.5 punted and
injected through pipefwd), static routes, and its kernel protocol exporting
everything into that namespace's main table, which pipefwd follows
(route_sources: kernel, type netlink). Checks, each bounded in time:
  - OSPF up through pipefwd; A's stub network 10.110.0.0/24 learnt via A
    (source kernel, installed); C pings 10.110.0.1;
  - BIRD's static 10.120.0.0/24 via A and B (multipath, exported as one
    kernel route with RTA_MULTIPATH): ECMP in pipefwd, 64 flows from C each
    at one gateway, both used;
  - A's stub network goes: OSPF withdraws it, BIRD removes it from the
    kernel, pipefwd forgets it (no route);
  - `ip route` by hand in the namespace: learnt; the same prefix at a worse
    metric is not taken (the kernel forwards by the best); the best deleted:
    pipefwd reads the table again and takes the worse one;
  - a reload that changes the source's id: the new source dumps the table
    and holds the same routes;
  - IPv6: BIRD's static 2001:db8:120::/64 via A, learnt by lpm6, C pings
    2001:db8:120::1;
  - pipefwd exits 0 with the accounting line exact.
Needs root, ip, ping, ethtool and BIRD 2 (bird2 package): skipped (exit 77) without.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netnslib as nl  # noqa: E402
from netnslib import check, sh, wait_for  # noqa: E402

PFX = os.environ.get("PF_NETNS_PREFIX", "pfb%04x" % (os.getpid() & 0xffff))
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-bird")

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_tap0,iface={p0}", mac: "02:00:00:00:00:10", ipv4: 10.1.0.1/24,
        ipv6: "2001:db8:1::1/64" }}
  p1: {{ device: "net_tap1,iface={p1}", mac: "02:00:00:00:00:11", ipv4: 10.2.0.1/24,
        ipv6: "2001:db8:2::1/64" }}
  p2: {{ device: "net_tap2,iface={p2}", mac: "02:00:00:00:00:12", ipv4: 10.3.0.1/24,
        ipv6: "2001:db8:3::1/64" }}
stages:
  rx: {{ type: rx, ports: [p0, p1, p2], next: {{ ipv4: lpm, arp: neigh, ipv6: lpm6 }} }}
  lpm: {{ type: lpm, learnt: {{ routes: 10000, nexthops: 64, groups: 16, tbl8: 16 }},
         next: {{ out: tx, neigh: neigh, host: host }} }}
  lpm6: {{ type: lpm6, learnt: {{ routes: 10000, nexthops: 64, groups: 16 }},
          next: {{ out: tx, neigh: neigh, host: host }} }}
  neigh: {{ type: neigh, next: {{ out: tx, host: host }} }}
  host: {{ type: host, namespace: {ns_r}, next: tx }}
  tx: {{ type: tx, ports: [p0, p1, p2] }}
route_sources:
  kernel: {{ type: netlink, id: {sid} }}
lcores:
  1: [rx, lpm, lpm6, neigh, host, tx]
"""

BIRD_ROUTER = """\
log "{d}/bird.log" all;
router id 10.0.0.1;
protocol device {{ scan time 1; }}
protocol kernel k4 {{ ipv4 {{ export all; import none; }}; merge paths on; }}
protocol kernel k6 {{ ipv6 {{ export all; import none; }}; merge paths on; }}
protocol static s4 {{ ipv4; route 10.120.0.0/24 via 10.1.0.2 via 10.2.0.2; }}
protocol static s6 {{ ipv6; route 2001:db8:120::/64 via 2001:db8:1::2; }}
protocol ospf v2 o4 {{
  ipv4 {{ import all; export none; }};
  area 0 {{ interface "p0" {{ hello 1; dead 4; wait 2; type broadcast; }}; }};
}}
"""

BIRD_A = """\
log "{d}/bird.log" all;
router id 10.0.0.2;
protocol device {{ scan time 1; }}
protocol ospf v2 o4 {{
  ipv4 {{ import none; export none; }};
  area 0 {{
    interface "eth0" {{ hello 1; dead 4; wait 2; type broadcast; }};
    interface "stub0" {{ stub yes; }};
  }};
}}
"""


class Bird:
    def __init__(self, ns, d, conf):
        self.ns, self.dir = ns, d
        os.makedirs(d, exist_ok=True)
        self.conf = os.path.join(d, "bird.conf")
        with open(self.conf, "w") as f:
            f.write(conf.format(d=d))
        self.sock = os.path.join(d, "bird.ctl")
        sh("bird", "-c", self.conf, "-s", self.sock, "-P", os.path.join(d, "bird.pid"), ns=ns)

    def birdc(self, *cmd):
        return sh("birdc", "-s", self.sock, *cmd, ns=self.ns, ok=False).stdout

    def stop(self):
        self.birdc("down")

    def log(self):
        try:
            return "== %s bird.log\n%s" % (self.ns, open(os.path.join(self.dir, "bird.log"))
                                           .read()[-2000:])
        except OSError:
            return ""


def learnt(ctl, stage, prefix):
    for row in ctl.routes(stage).get(prefix, []):
        if row.get("source", "").startswith("learnt") and row.get("state") == "installed":
            return row
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "ping", "ethtool")):
        print("skipped: needs root, ip, ping and ethtool")
        return 77
    if not shutil.which("bird") or not shutil.which("birdc"):
        print("skipped: BIRD 2 is not installed (make deps installs bird2)")
        return 77
    tmp = tempfile.mkdtemp(prefix="pf_bird_")
    ctl = nl.Ctl(FILE_PREFIX)
    wire = nl.Wire(PFX)
    birds = {}
    proc = None
    try:
        ns = {"r": wire.namespace("r")}
        ns["a"] = wire.host("p0", "a", "02:00:00:0a:00:02", ["10.1.0.2/24", "2001:db8:1::2/64"],
                            gw4="10.1.0.1", gw6="2001:db8:1::1")
        ns["b"] = wire.host("p1", "b", "02:00:00:0b:00:02", ["10.2.0.2/24", "2001:db8:2::2/64"],
                            gw4="10.2.0.1", gw6="2001:db8:2::1")
        ns["c"] = wire.host("p2", "c", "02:00:00:0c:00:02", ["10.3.0.2/24", "2001:db8:3::2/64"],
                            gw4="10.3.0.1", gw6="2001:db8:3::1")
        # A's stub network on a veth pair of its own (no dummy module here).
        sh("ip", "link", "add", "stub0", "type", "veth", "peer", "name", "stub1", ns=ns["a"])
        sh("ip", "addr", "add", "10.110.0.1/24", "dev", "stub0", ns=ns["a"])
        sh("ip", "link", "set", "stub0", "up", ns=ns["a"])
        sh("ip", "link", "set", "stub1", "up", ns=ns["a"])
        for p in ("a", "b"):
            sh("ip", "addr", "add", "10.120.0.1/32", "dev", "lo", ns=ns[p])
        sh("ip", "addr", "add", "2001:db8:120::1/128", "dev", "lo", ns=ns["a"])
        topo = os.path.join(tmp, "topo.yaml")

        def write_topo(sid):
            with open(topo + ".new", "w") as f:
                f.write(TOPO.format(ns_r=ns["r"], sid=sid,
                                    **wire.tap_names()))
            os.rename(topo + ".new", topo)

        write_topo(0)
        log = os.path.join(tmp, "pipefwd.log")
        proc = nl.start_pipefwd(args.pipefwd, wire.ns_w, topo, FILE_PREFIX, log)
        if not check(wire.attach(log), "pipefwd made its taps"):
            return 1
        check(wait_for(lambda: ctl.source("kernel").get("state") == "up", 30),
              "the netlink source follows the router namespace's table")
        # BIRD once the host interfaces are there.
        wait_for(lambda: sh("ip", "link", "show", "p0", ns=ns["r"], ok=False).returncode == 0, 20)
        birds["r"] = Bird(ns["r"], os.path.join(tmp, "r"), BIRD_ROUTER)
        birds["a"] = Bird(ns["a"], os.path.join(tmp, "a"), BIRD_A)

        ok = wait_for(lambda: learnt(ctl, "lpm", "10.110.0.0/24") is not None, 60, 0.5)
        if not check(ok, "OSPF through pipefwd: 10.110.0.0/24 learnt from BIRD's kernel "
                     "protocol"):
            print(birds["r"].birdc("show", "ospf", "neighbors"), birds["r"].birdc("show", "route"))
            print(sh("ip", "route", ns=ns["r"]).stdout, ctl.text("sources"))
            return 1
        row = learnt(ctl, "lpm", "10.110.0.0/24")
        check(row.get("nexthop") == "10.1.0.2" and row.get("port") == "p0",
              "via A (10.1.0.2 on p0): %s" % row)
        r = sh("ping", "-c", "3", "-i", "0.3", "-w", "15", "10.110.0.1", ns=ns["c"], ok=False)
        check(r.returncode == 0, "C pings 10.110.0.1 in A's stub network")

        # BIRD's multipath static route: one kernel route, RTA_MULTIPATH.
        check(wait_for(lambda: (learnt(ctl, "lpm", "10.120.0.0/24") or {}).get("nexthop", "")
                       .startswith("ecmp(2)"), 20),
              "10.120.0.0/24 via A and B: ECMP %s" % learnt(ctl, "lpm", "10.120.0.0/24"))
        for gw in ("10.1.0.2", "10.2.0.2"):
            sh("ping", "-c", "1", "-w", "5", gw, ns=ns["c"], ok=False)
        time.sleep(0.3)
        got = nl.flows(tmp, "ecmp", ns["c"], "10.3.0.2", "10.120.0.1",
                       {"a": ns["a"], "b": ns["b"]}, 64)
        a, b = set(got["a"]), set(got["b"])
        check(len(a | b) == 64 and not (a & b) and len(a) >= 8 and len(b) >= 8,
              "64 flows, each at one gateway (%d at A, %d at B)" % (len(a), len(b)))

        # A's stub network goes: OSPF, BIRD, the kernel, pipefwd.
        sh("ip", "link", "set", "stub0", "down", ns=ns["a"])
        check(wait_for(lambda: learnt(ctl, "lpm", "10.110.0.0/24") is None, 30, 0.5),
              "A's stub network withdrawn by OSPF: gone from pipefwd")
        r = sh("ping", "-c", "2", "-i", "0.2", "-W", "1", "10.110.0.1", ns=ns["c"], ok=False)
        check(r.returncode != 0, "C no longer reaches 10.110.0.1")

        # By hand, and the kernel's metrics.
        sh("ip", "route", "add", "10.130.0.0/24", "via", "10.2.0.2", "dev", "p1", "metric", "10",
           ns=ns["r"])
        check(wait_for(lambda: (learnt(ctl, "lpm", "10.130.0.0/24") or {}).get("nexthop") ==
                       "10.2.0.2", 10), "ip route add 10.130.0.0/24 via B: learnt")
        skipped = ctl.source("kernel").get("skipped", {}).get("metric", 0)
        sh("ip", "route", "add", "10.130.0.0/24", "via", "10.1.0.2", "dev", "p0", "metric",
           "500", ns=ns["r"])
        time.sleep(1)
        check((learnt(ctl, "lpm", "10.130.0.0/24") or {}).get("nexthop") == "10.2.0.2" and
              ctl.source("kernel").get("skipped", {}).get("metric", 0) == skipped + 1,
              "the same prefix at metric 500 via A: not taken (skipped: metric)")
        resyncs = ctl.source("kernel").get("resyncs", 0)
        sh("ip", "route", "del", "10.130.0.0/24", "via", "10.2.0.2", "metric", "10", ns=ns["r"])
        check(wait_for(lambda: (learnt(ctl, "lpm", "10.130.0.0/24") or {}).get("nexthop") ==
                       "10.1.0.2", 10) and ctl.source("kernel").get("resyncs", 0) > resyncs,
              "the best deleted: the table read again, the metric-500 route via A taken")

        # IPv6 from BIRD's static protocol.
        if check(wait_for(lambda: learnt(ctl, "lpm6", "2001:db8:120::/64") is not None, 20),
                   "IPv6: 2001:db8:120::/64 via A learnt by lpm6"):
            r = sh("ping", "-c", "3", "-i", "0.3", "-w", "15", "2001:db8:120::1", ns=ns["c"],
                   ok=False)
            check(r.returncode == 0, "C pings 2001:db8:120::1 behind A")

        # A reload that changes the source: withdrawn, and the new one dumps the table.
        before = sorted(p for p, rows in ctl.routes("lpm").items()
                        if any(x.get("source", "").startswith("learnt") for x in rows))
        write_topo(1)
        sh("kill", "-HUP", str(proc.pid))
        ok = wait_for(lambda: ctl.source("kernel").get("id") == 1 and
                      ctl.source("kernel").get("state") == "up", 20)
        after = sorted(p for p, rows in ctl.routes("lpm").items()
                       if any(x.get("source") == "learnt:1" for x in rows))
        check(ok and after == before and
              not any(x.get("source") == "learnt:0" for rows in ctl.routes("lpm").values()
                      for x in rows),
              "reloaded with id 1: the new source dumped the table, the same routes %s" % after)
        check(nl.stop_pipefwd(proc, log), "pipefwd exits 0, accounting exact")
        proc = None
    finally:
        if nl.failures:
            for b in birds.values():
                print(b.log())
        for b in birds.values():
            b.stop()
        if proc is not None:
            proc.kill()
            proc.wait()
        wire.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nl.failures else 0


if __name__ == "__main__":
    sys.exit(main())
