#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""FRR drives pipefwd: eBGP through pipefwd's ports, routes by FPM (issue 30).

    /usr/bin/python3 test/netns/routing_frr.py --pipefwd build/app/pipefwd

pipefwd runs in its own namespace (PFX+"w") with three net_tap ports: p0 to
peer A (AS 65001, 10.1.0.2, 2001:db8:1::2), p1 to peer B (AS 65002, 10.2.0.2,
2001:db8:2::2), p2 to a client C (10.3.0.2, 2001:db8:3::2). The router's own
FRR (AS 65000: zebra with dplane_fpm_nl, bgpd) runs in the host namespace
PFX+"r", where the host stage made pipefwd's interfaces p0..p2; its BGP
sessions to A and B go through pipefwd's ports (punt and inject), zebra sends
its table to pipefwd's FPM server (route_sources: frr). A and B each announce
10.100.0.0/24 and 2001:db8:100::/64 (their loopbacks hold .1 / ::1); A also
10.101.0.0/24 and 2001:db8:101::/64. Checks, each bounded in time:
  (a) both sessions come up; pipefwd learns A's prefixes from FRR (source
      frr, next hop A, installed) and C reaches 10.101.0.1 behind A;
  (b) 10.100.0.0/24 is ECMP over A and B: 64 UDP flows from C, each flow at
      one peer, both used; 1024 flows spread within 10 % of half each; B's
      port down (its tap): every flow at A, A's flows stayed;
  (d) the same over IPv6: 2001:db8:101::1 reached, 64 flows over both peers;
  (e) zebra killed: the source is lost, forwarding goes on (C still reaches
      10.101.0.1); A withdraws 10.101.0.0/24 meanwhile; zebra restarted: the
      source resyncs, 10.101.0.0/24 is swept, 10.100.0.0/24 stays, nothing
      stale is left;
  pipefwd exits 0 with the accounting line exact.
Needs root, ip, ping, ethtool and FRR (frr package): skipped (exit 77) without.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netnslib as nl  # noqa: E402
from netnslib import check, sh, wait_for  # noqa: E402

PFX = os.environ.get("PF_NETNS_PREFIX", "pff%04x" % (os.getpid() & 0xffff))
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-frr")

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
  frr: {{ type: fpm, listen: "127.0.0.1:2620", grace: 120, resync: 8 }}
lcores:
  1: [rx, lpm, lpm6, neigh, host, tx]
"""

ZEBRA = """\
hostname {name}
log file @DIR@/zebra.log
{fpm}
"""

BGP_ROUTER = """\
hostname r
log file @DIR@/bgpd.log
router bgp 65000
 bgp router-id 10.0.0.1
 no bgp ebgp-requires-policy
 no bgp network import-check
 bgp bestpath as-path multipath-relax
 timers bgp 1 3
 neighbor 10.1.0.2 remote-as 65001
 neighbor 10.1.0.2 timers connect 1
 neighbor 10.2.0.2 remote-as 65002
 neighbor 10.2.0.2 timers connect 1
 neighbor 2001:db8:1::2 remote-as 65001
 neighbor 2001:db8:1::2 timers connect 1
 neighbor 2001:db8:2::2 remote-as 65002
 neighbor 2001:db8:2::2 timers connect 1
 address-family ipv4 unicast
  redistribute connected
  maximum-paths 4
  no neighbor 2001:db8:1::2 activate
  no neighbor 2001:db8:2::2 activate
 exit-address-family
 address-family ipv6 unicast
  redistribute connected
  maximum-paths 4
  neighbor 2001:db8:1::2 activate
  neighbor 2001:db8:2::2 activate
 exit-address-family
"""

BGP_PEER = """\
hostname {name}
log file @DIR@/bgpd.log
router bgp {asn}
 bgp router-id 10.0.0.{id}
 no bgp ebgp-requires-policy
 no bgp network import-check
 timers bgp 1 3
 neighbor {rtr4} remote-as 65000
 neighbor {rtr4} timers connect 1
 neighbor {rtr6} remote-as 65000
 neighbor {rtr6} timers connect 1
 address-family ipv4 unicast
{nets4} no neighbor {rtr6} activate
 exit-address-family
 address-family ipv6 unicast
{nets6}  neighbor {rtr6} activate
 exit-address-family
"""


def peer_conf(name, asn, n, nets4, nets6):
    return BGP_PEER.format(name=name, asn=asn, id=n + 1, rtr4="10.%d.0.1" % n,
                           rtr6="2001:db8:%d::1" % n,
                           nets4="".join("  network %s\n" % x for x in nets4),
                           nets6="".join("  network %s\n" % x for x in nets6))


def learnt(ctl, stage, prefix):
    """The installed learnt route of @prefix (its row), or None."""
    for row in ctl.routes(stage).get(prefix, []):
        if row.get("source", "").startswith("learnt") and row.get("state") == "installed":
            return row
    return None


def ecmp_case(tmp, wire, ctl, ns, fam, n_flows):
    src, dst = ("10.3.0.2", "10.100.0.1") if fam == 4 else ("2001:db8:3::2", "2001:db8:100::1")
    # Every gateway resolved first (the flows once, not counted): a burst to an
    # unresolved one overflows its hold queue (neigh_hold_overflow, as Linux's
    # unres_qlen), not what this checks. IPv6 gateways are the peers' link-local
    # addresses: only traffic through them resolves them.
    nl.flows(tmp, "warm%d" % fam, ns["c"], src, dst, {"a": ns["a"], "b": ns["b"]}, n_flows,
             k=1, seconds=2)
    time.sleep(0.5)   # the learnt next hops take the fast path at the next upkeep
    got = nl.flows(tmp, "ecmp%d" % fam, ns["c"], src, dst, {"a": ns["a"], "b": ns["b"]},
                   n_flows)
    a, b = set(got["a"]), set(got["b"])
    check(len(a | b) == n_flows and not (a & b),
          "IPv%d: %d flows, each at one peer (%d at A, %d at B, %d at both)" %
          (fam, len(a | b), len(a), len(b), len(a & b)))
    if not check(len(a) >= n_flows // 8 and len(b) >= n_flows // 8,
                 "IPv%d: both peers carry flows" % fam):
        for st in ("lpm", "lpm6", "neigh"):
            x = ctl.stage(st)
            print(st, {k: v for k, v in dict(x.get("drops", {}), **x.get("counters", {})).items()
                       if v})
        print(ctl.text("neighbors"))
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "ping", "ethtool")):
        print("skipped: needs root, ip, ping and ethtool")
        return 77
    if not nl.frr_available():
        print("skipped: FRR is not installed (make deps installs frr)")
        return 77
    tmp = tempfile.mkdtemp(prefix="pf_frr_")
    os.chmod(tmp, 0o711)   # the frr user reaches its own directories below
    ctl = nl.Ctl(FILE_PREFIX)
    wire = nl.Wire(PFX)
    frrs = {}
    proc = None
    try:
        ns = {"r": wire.namespace("r")}
        ns["a"] = wire.host("p0", "a", "02:00:00:0a:00:02", ["10.1.0.2/24", "2001:db8:1::2/64"])
        ns["b"] = wire.host("p1", "b", "02:00:00:0b:00:02", ["10.2.0.2/24", "2001:db8:2::2/64"])
        ns["c"] = wire.host("p2", "c", "02:00:00:0c:00:02", ["10.3.0.2/24", "2001:db8:3::2/64"],
                            gw4="10.3.0.1", gw6="2001:db8:3::1")
        for p in ("a", "b"):
            sh("ip", "addr", "add", "10.100.0.1/32", "dev", "lo", ns=ns[p])
            sh("ip", "addr", "add", "2001:db8:100::1/128", "dev", "lo", ns=ns[p])
        sh("ip", "addr", "add", "10.101.0.1/32", "dev", "lo", ns=ns["a"])
        sh("ip", "addr", "add", "2001:db8:101::1/128", "dev", "lo", ns=ns["a"])
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(ns_r=ns["r"], **wire.tap_names()))
        log = os.path.join(tmp, "pipefwd.log")
        proc = nl.start_pipefwd(args.pipefwd, wire.ns_w, topo, FILE_PREFIX, log)
        if not check(wire.attach(log), "pipefwd made its taps"):
            return 1
        check(wait_for(lambda: ctl.source("frr").get("state") == "listening", 30),
              "the FPM source listens in the router's namespace")
        frrs["r"] = nl.Frr(ns["r"], os.path.join(tmp, "r"), {
            "zebra": ZEBRA.format(name="r", fpm="fpm address 127.0.0.1 port 2620"),
            "bgpd": BGP_ROUTER}, fpm=True)
        frrs["a"] = nl.Frr(ns["a"], os.path.join(tmp, "a"), {
            "zebra": ZEBRA.format(name="a", fpm=""),
            "bgpd": peer_conf("a", 65001, 1,
                              ["10.100.0.0/24", "10.101.0.0/24", "10.102.0.0/24"],
                              ["2001:db8:100::/64", "2001:db8:101::/64"])})
        frrs["b"] = nl.Frr(ns["b"], os.path.join(tmp, "b"), {
            "zebra": ZEBRA.format(name="b", fpm=""),
            "bgpd": peer_conf("b", 65002, 2, ["10.100.0.0/24"], ["2001:db8:100::/64"])})
        for f in frrs.values():
            f.start("zebra")
            f.start("bgpd")

        # (a) sessions through pipefwd, routes learnt, a host behind A reached.
        up = wait_for(lambda: learnt(ctl, "lpm", "10.101.0.0/24") is not None and
                      learnt(ctl, "lpm", "10.100.0.0/24") is not None, 60, 1)
        if not check(up, "BGP up through pipefwd's ports; pipefwd learnt 10.100/24 and 10.101/24"):
            print(frrs["r"].vtysh("show bgp summary", "show ip route"))
            print(ctl.text("sources"), ctl.text("routes", "lpm"))
            return 1
        row = learnt(ctl, "lpm", "10.101.0.0/24")
        check(row.get("nexthop") == "10.1.0.2" and row.get("port") == "p0",
              "10.101.0.0/24 via A (10.1.0.2 on p0): %s" % row)
        src = ctl.source("frr")
        check(src.get("state") == "up" and src.get("routes_ipv4", 0) >= 2 and
              src.get("skipped", {}).get("kernel", 0) > 0,
              "source frr up, %s IPv4 routes, connected ones skipped as kernel (%s)" %
              (src.get("routes_ipv4"), src.get("skipped")))
        r = sh("ping", "-c", "3", "-i", "0.3", "-w", "15", "10.101.0.1", ns=ns["c"], ok=False)
        check(r.returncode == 0, "C pings 10.101.0.1 behind A")
        look = ctl.json("route", "lpm", "10.101.0.1") or {}
        check(look.get("prefix") == "10.101.0.0/24" and look.get("source") == "learnt" and
              look.get("nexthop") == "10.1.0.2" and look.get("port") == "p0" and
              look.get("result") == "route" and look.get("mac") == "02:00:00:0a:00:02",
              "route lpm 10.101.0.1: the learnt route, forwarded at A's MAC: %s" % look)
        # A withdraws a prefix while zebra is up: zebra's FPM delete (a message with no
        # route type) takes it out of pipefwd too.
        wait_for(lambda: learnt(ctl, "lpm", "10.102.0.0/24") is not None, 30)
        deleted0 = ctl.source("frr").get("deleted", 0)
        frrs["a"].vtysh("configure terminal", "router bgp 65001", "address-family ipv4 unicast",
                        "no network 10.102.0.0/24")
        check(wait_for(lambda: learnt(ctl, "lpm", "10.102.0.0/24") is None, 30) and
              ctl.source("frr").get("deleted", 0) > deleted0,
              "A withdraws 10.102.0.0/24: zebra's delete takes it out of pipefwd (%s)" %
              ctl.source("frr").get("skipped"))

        # (b) ECMP, then B's port down.
        row = learnt(ctl, "lpm", "10.100.0.0/24")
        check(wait_for(lambda: (learnt(ctl, "lpm", "10.100.0.0/24") or {}).get("nexthop", "")
                       .startswith("ecmp(2)"), 30),
              "10.100.0.0/24 is ECMP over A and B: %s" % learnt(ctl, "lpm", "10.100.0.0/24"))
        a, b = ecmp_case(tmp, wire, ctl, ns, 4, 64)
        look = ctl.json("route", "lpm", "10.100.0.9") or {}
        check(look.get("result") == "ecmp" and
              {look.get("member0"), look.get("member1")} == {"10.1.0.2", "10.2.0.2"},
              "route lpm 10.100.0.9: ECMP over A and B: %s" % look)
        got = nl.flows(tmp, "spread", ns["c"], "10.3.0.2", "10.100.0.1",
                       {"a": ns["a"], "b": ns["b"]}, 1024, k=1, seconds=8, base=30000)
        na, nb = len(got["a"]), len(got["b"])
        # (a busy machine's sinks may miss a few single-datagram flows: the spread counts)
        check(na + nb >= 950 and abs(na - nb) <= 0.2 * (na + nb),
              "1024 flows spread within 10 %% of half each: A %d, B %d" % (na, nb))
        wire.link("p1", False)
        time.sleep(0.5)
        down = nl.flows(tmp, "down", ns["c"], "10.3.0.2", "10.100.0.1",
                        {"a": ns["a"], "b": ns["b"]}, 64)
        check(len(down["a"]) == 64 and not down["b"] and a <= set(down["a"]),
              "B's port down: every flow at A (%d), A's flows stayed" % len(down["a"]))
        wire.link("p1", True)

        # (d) IPv6 over the same.
        up6 = wait_for(lambda: learnt(ctl, "lpm6", "2001:db8:101::/64") is not None and
                       (learnt(ctl, "lpm6", "2001:db8:100::/64") or {}).get("nexthop", "")
                       .startswith("ecmp(2)"), 60, 1)
        if check(up6, "IPv6: pipefwd learnt 2001:db8:101::/64 via A and 2001:db8:100::/64 ECMP"):
            r = sh("ping", "-c", "3", "-i", "0.3", "-w", "15", "2001:db8:101::1", ns=ns["c"],
                   ok=False)
            check(r.returncode == 0, "C pings 2001:db8:101::1 behind A")
            ecmp_case(tmp, wire, ctl, ns, 6, 64)
        else:
            print(ctl.text("routes", "lpm6"))
        # ECMP is back for (e): B's session was down for a while.
        wait_for(lambda: (learnt(ctl, "lpm", "10.100.0.0/24") or {}).get("nexthop", "")
                 .startswith("ecmp(2)"), 30)

        # (e) zebra killed and restarted: resync, nothing stale.
        frrs["r"].stop("zebra")
        check(wait_for(lambda: ctl.source("frr").get("state") == "lost", 15),
              "zebra killed: source frr lost, its routes kept (grace)")
        r = sh("ping", "-c", "3", "-i", "0.3", "-w", "15", "10.101.0.1", ns=ns["c"], ok=False)
        check(r.returncode == 0, "C still reaches 10.101.0.1 while zebra is away")
        frrs["a"].vtysh("configure terminal", "router bgp 65001", "address-family ipv4 unicast",
                        "no network 10.101.0.0/24")
        time.sleep(4)   # bgpd on the router hears the withdraw; no zebra to tell
        check(learnt(ctl, "lpm", "10.101.0.0/24") is not None,
              "withdrawn by A while zebra is away: still in pipefwd (nobody told it)")
        swept0 = ctl.source("frr").get("swept", 0)
        # As watchfrr does when zebra dies: every daemon starts again.
        frrs["r"].stop("bgpd")
        # The killed zebra left its routes in the router's kernel table. A new
        # zebra reads them back as its own and replays them over FPM; FRR 8.4
        # sweeps such routes only when it read them within its start-up second
        # (rib_sweep_table skips re->uptime > startup_time), so on a busy
        # machine the withdrawn prefix can stay in zebra itself, and pipefwd,
        # which mirrors zebra, rightly keeps it. Clear them, as zebra's own
        # sweep would: then only pipefwd's mark and sweep can take it out.
        # (zebra's routes point at its next-hop objects: flushing those takes the
        # routes with them; `ip route flush` refuses routes with an nhid.)
        sh("ip", "nexthop", "flush", ns=ns["r"])
        for fam in ("-4", "-6"):
            sh("ip", fam, "route", "flush", "proto", "bgp", ns=ns["r"])
        left = sh("ip", "route", "show", "proto", "bgp", ns=ns["r"]).stdout.strip()
        check(not left, "the killed zebra's kernel routes cleared: %r" % left)
        frrs["r"].start("zebra")
        frrs["r"].start("bgpd")
        ok = wait_for(lambda: ctl.source("frr").get("state") == "up" and
                      ctl.source("frr").get("resyncs", 0) >= 1 and
                      learnt(ctl, "lpm", "10.101.0.0/24") is None, 60, 1)
        src = ctl.source("frr")
        check(ok and src.get("swept", 0) > swept0,
              "zebra back: resynced (%s), 10.101.0.0/24 swept (%d stale routes swept)" %
              (src.get("state"), src.get("swept", 0) - swept0))
        if not ok:
            print(learnt(ctl, "lpm", "10.101.0.0/24"), src)
            print(frrs["r"].vtysh("show ip route"))
            print(sh("ip", "-4", "route", ns=ns["r"], ok=False).stdout)
        check(wait_for(lambda: learnt(ctl, "lpm", "10.100.0.0/24") is not None, 30),
              "10.100.0.0/24 stays after the resync")
        r = sh("ping", "-c", "3", "-i", "0.3", "-w", "15", "10.100.0.1", ns=ns["c"], ok=False)
        check(r.returncode == 0, "C reaches 10.100.0.1 after the resync")
        fib = frrs["r"].vtysh("show ip route bgp")
        stale = [p for p, rows in ctl.routes("lpm").items()
                 if any(x.get("source", "").startswith("learnt") for x in rows) and p not in fib]
        check(not stale, "every learnt IPv4 route is in zebra's table: stale %s" % stale)
        check(nl.stop_pipefwd(proc, log), "pipefwd exits 0, accounting exact")
        proc = None
    finally:
        if nl.failures:
            for f in frrs.values():
                print(f.logs())
        for f in frrs.values():
            f.stop_all()
        if proc is not None:
            proc.kill()
            proc.wait()
        wire.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if nl.failures else 0


if __name__ == "__main__":
    sys.exit(main())
