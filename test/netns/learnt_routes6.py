#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Learnt IPv6 routes through pipefwd between real hosts (lpm6's learnt: table).

    /usr/bin/python3 test/netns/learnt_routes6.py --pipefwd build/app/pipefwd

learnt_routes.py's IPv6 twin. pipefwd runs in a namespace of its own
(PFX+"w") with three net_tap ports bridged to veths there: host A
(2001:db8:1::2) on p0, gateways G1 (2001:db8:2::2) on p1 and G2
(2001:db8:3::2) on p2, each gateway holding 2001:db8:50::1 and
2001:db8:60::1 on its loopback and routing back to pipefwd. Routes are learnt
through the stats socket (/pipefwd/learn), as a routing daemon's would be:
  - 2001:db8:50::/48 via G1's link-local address: A pings 2001:db8:50::1
    (pipefwd resolves G1 by Neighbour Discovery, then forwards on the fast
    path: lpm6's ip6_to_neigh stops moving, `route lpm6` finds the entry a
    forward to G1's MAC that the fast path takes), the route shows in
    `routes lpm6` as learnt, installed, with G1's MAC;
  - a replace to G2's global address moves the traffic (G2 answers), a
    delete gives no route;
  - 2001:db8:60::/48 via G1 (link-local) and G2 (global): 64 UDP flows from
    A, each flow received by one gateway only, both gateways getting flows;
    G2's port goes down (its tap in the wire namespace): every flow reaches
    G1, and the flows G1 had stay there (only G2's moved);
  - pipefwd exits 0 with the accounting line exact.
Needs root, ip, ping, ethtool: skipped (exit 77) without.
"""
import argparse
import os
import sys
import tempfile
import time

import netnslib as nl
from netnslib import check, sh, wait_for

PFX = os.environ.get("PF_NETNS_PREFIX", "pf6l%04x" % (os.getpid() & 0xffff))
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-learnt6")
HOSTS = {  # name: (port, address, router address, MAC)
    "a": ("p0", "2001:db8:1::2", "2001:db8:1::1", "02:00:00:0a:00:02"),
    "g1": ("p1", "2001:db8:2::2", "2001:db8:2::1", "02:00:00:0b:00:02"),
    "g2": ("p2", "2001:db8:3::2", "2001:db8:3::1", "02:00:00:0c:00:02"),
}
N_FLOWS = 64

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_tap0,iface={p0}", mac: "02:00:00:00:00:10", ipv6: "2001:db8:1::1/64" }}
  p1: {{ device: "net_tap1,iface={p1}", mac: "02:00:00:00:00:11", ipv6: "2001:db8:2::1/64" }}
  p2: {{ device: "net_tap2,iface={p2}", mac: "02:00:00:00:00:12", ipv6: "2001:db8:3::1/64" }}
stages:
  rx: {{ type: rx, ports: [p0, p1, p2], next: {{ ipv6: lpm6 }} }}
  lpm6: {{ type: lpm6, learnt: {{ routes: 1000, nexthops: 64, groups: 8, tbl8: 256 }},
          next: {{ out: tx, icmp: icmp6, neigh: neigh }} }}
  neigh: {{ type: neigh, next: {{ out: tx, icmp6: icmp6 }} }}
  icmp6: {{ type: icmp6, next: tx }}
  tx: {{ type: tx, ports: [p0, p1, p2] }}
lcores:
  1: [rx, lpm6, neigh, icmp6, tx]
"""


def linklocal(ns):
    """The host's link-local address once it may be used (DAD over), or None."""
    out = sh("ip", "-6", "-o", "addr", "show", "dev", "eth0", "scope", "link", ns=ns).stdout
    for line in out.splitlines():
        if "tentative" not in line:
            return line.split()[3].split("/")[0]
    return None


def ping(ns, dst, n, interval="0.2"):
    return sh("ping", "-c", str(n), "-i", interval, "-w", "10", dst, ns=ns, ok=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    a = ap.parse_args()
    if not nl.can_run("ip", "ping", "ethtool"):
        return 77
    ctl = nl.Ctl(FILE_PREFIX)
    tmp = tempfile.mkdtemp(prefix="pf_learnt6_")
    wire = nl.Wire(PFX)
    proc = None
    try:
        # pipefwd's taps send no IPv6 of their own (router solicitations, DAD).
        sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=wire.ns_w)
        ns = {}
        for name, (port, addr, rtr, mac) in HOSTS.items():
            ns[name] = wire.host(port, name, mac, [addr + "/64"], gw6=rtr)
            if name != "a":
                for lo in ("2001:db8:50::1/128", "2001:db8:60::1/128"):
                    sh("ip", "addr", "add", lo, "dev", "lo", ns=ns[name])
        check(wait_for(lambda: linklocal(ns["g1"]) is not None, 10), "G1 has its link-local")
        g1_ll = linklocal(ns["g1"])
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(**wire.tap_names()))
        log = os.path.join(tmp, "pipefwd.log")
        proc = nl.start_pipefwd(a.pipefwd, wire.ns_w, topo, FILE_PREFIX, log)
        if not check(wire.attach(log), "pipefwd made its taps"):
            return 1
        check(wait_for(lambda: ctl.json("totals") is not None, 20), "the stats socket answers")

        # By a link-local address: resolved by ND, then on the fast path.
        r = ctl.json("raw", "/pipefwd/learn,add,0,2001:db8:50::/48,%s@p1" % g1_ll)
        check(r is not None and r.get("added") == 1,
              "learn 2001:db8:50::/48 via G1 (%s): %s" % (g1_ll, r))
        check(ping(ns["a"], "2001:db8:50::1", 5).returncode == 0,
              "A pings 2001:db8:50::1 behind G1")
        time.sleep(0.3)   # the upkeep (100 ms) puts the next hop on the fast path
        before = ctl.stage("lpm6").get("counters", {}).get("ip6_to_neigh", 0)
        p = ping(ns["a"], "2001:db8:50::1", 10, "0.1")
        after = ctl.stage("lpm6").get("counters", {}).get("ip6_to_neigh", 0)
        check(p.returncode == 0 and after == before,
              "then forwarded without the neigh stage (ip6_to_neigh %d -> %d)" % (before, after))
        look = ctl.json("route", "lpm6", "2001:db8:50::1") or {}
        check(look.get("result") == "route" and look.get("prefix") == "2001:db8:50::/48" and
              look.get("port") == "p1" and look.get("nexthop") == g1_ll and
              look.get("mac") == HOSTS["g1"][3] and look.get("fast_path") == 1,
              "on the fast path, G1's MAC in its entry: %s" % look)
        mine = ctl.routes("lpm6").get("2001:db8:50::/48", [])
        check(len(mine) == 1 and mine[0].get("source") == "learnt:0" and
              mine[0].get("state") == "installed" and mine[0].get("port") == "p1" and
              mine[0].get("nexthop") == g1_ll and mine[0].get("mac") == HOSTS["g1"][3],
              "routes lpm6 shows it learnt, installed, at G1's MAC: %s" % mine)
        own = ctl.routes("lpm6")
        check([x.get("source") for x in own.get("2001:db8:1::/64", [])] == ["connected"] and
              [x.get("source") for x in own.get("2001:db8:1::1/128", [])] == ["local"],
              "and the ports' connected prefixes and addresses")

        # A replace to G2's global address moves it; a delete takes it away.
        r = ctl.json("raw", "/pipefwd/learn,add,0,2001:db8:50::/48,2001:db8:3::2@p2")
        check(r is not None and r.get("replaced") == 1, "replace via G2: %s" % r)
        sh("ip", "addr", "del", "2001:db8:50::1/128", "dev", "lo", ns=ns["g1"])
        check(ping(ns["a"], "2001:db8:50::1", 3).returncode == 0,
              "A reaches 2001:db8:50::1 behind G2 now (G1 no longer has it)")
        r = ctl.json("raw", "/pipefwd/learn,del,0,2001:db8:50::/48")
        p = sh("ping", "-c", "2", "-i", "0.2", "-W", "1", "2001:db8:50::1", ns=ns["a"], ok=False)
        check(r is not None and r.get("deleted") == 1 and p.returncode != 0,
              "deleted: no route to 2001:db8:50::1")

        # ECMP over G1 (link-local) and G2 (global), both resolved already.
        r = ctl.json("raw", "/pipefwd/learn,add,0,2001:db8:60::/48,%s@p1,2001:db8:3::2@p2" %
                     g1_ll)
        check(r is not None and r.get("added") == 1, "learn 2001:db8:60::/48 via G1 and G2: %s" % r)
        time.sleep(0.3)
        look = ctl.json("route", "lpm6", "2001:db8:60::1") or {}
        check(look.get("result") == "ecmp" and look.get("prefix") == "2001:db8:60::/48",
              "the lookup finds the group: %s" % look)
        sinks = {"g1": ns["g1"], "g2": ns["g2"]}
        got = nl.flows(tmp, "both", ns["a"], HOSTS["a"][1], "2001:db8:60::1", sinks, N_FLOWS)
        g1, g2 = set(got["g1"]), set(got["g2"])
        check(len(g1 | g2) == N_FLOWS and not (g1 & g2),
              "%d flows: each at one gateway (%d at G1, %d at G2, %d at both)" %
              (len(g1 | g2), len(g1), len(g2), len(g1 & g2)))
        check(len(g1) >= N_FLOWS // 4 and len(g2) >= N_FLOWS // 4, "both gateways carry flows")
        wire.link("p2", False)
        time.sleep(0.5)   # the upkeep (100 ms) sees the link down
        down = nl.flows(tmp, "down", ns["a"], HOSTS["a"][1], "2001:db8:60::1", sinks, N_FLOWS)
        check(len(down["g1"]) == N_FLOWS and not down["g2"] and g1 <= set(down["g1"]),
              "G2's port down: every flow at G1 (%d), G1's flows stayed" % len(down["g1"]))
        wire.link("p2", True)
        g = ctl.stage("lpm6").get("gauges", {})
        check(g.get("learnt_routes") == 1 and g.get("learnt_installed") == 1 and
              g.get("learnt_groups") == 1 and g.get("learnt_updates") == 4,
              "gauges: the one learnt route left, installed, one group, 4 updates: %s" %
              {k: v for k, v in g.items() if k.startswith("learnt")})
        ok = nl.stop_pipefwd(proc, log)
        proc = None
        check(ok, "pipefwd exits 0, accounting exact")
    finally:
        nl.teardown(proc, wire, tmp)
    return 1 if nl.failures else 0


if __name__ == "__main__":
    sys.exit(main())
