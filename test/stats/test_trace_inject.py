#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""trace inject (pipefwd-ctl trace inject, /pipefwd/trace_inject) on a router.

The router of conf/default.yaml (rx -> acl (permit-reflect from the LAN) ->
lpm -> tx, and a bridge rx_l2 -> l2 -> tx), plus a route whose next hop is
an address (lpm's neigh edge to a neigh stage, which answers ARP). A finite pcap first opens a
session, teaches the bridge a station on each port and leaves every counter still.
Then packets described on the command line are walked through the stages:
routed (rx, acl, lpm, tx: TTL - 1, the next hop's MAC, the checksum scapy
computes), the reply riding that session, no route, denied by the ACL, TTL
1, held by neigh for an unresolved next hop, an ARP request answered, a
bridged frame to a known and to an unknown station. The routes by source
(--source, --count) are the topology's, the ports' subnets and addresses. Each path, edge, drop
reason and rewritten header comes from the topology's rules and scapy,
never from pipefwd. After all of them the live state must be as it was:
every stage's counters and gauges, rings, ports, totals, the ACL sessions,
the MAC table, the neighbour table (nothing learnt, opened or held), and
the exit report exact with no mbuf lost. Errors: unknown port (did you
mean, exit 1), unknown layer or field (exit 2).

usage: test_trace_inject.py PIPEFWD PIPEFWD_CTL
"""
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import traceback

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ARP, IP, TCP, UDP, Ether, Raw, raw  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from pftest import Ctl, dpdk_rundir, finish, stop_pipefwd, telemetry, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "trace_inject_%d" % os.getpid()
FAILS = []
R0, R1, HOST, GW = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:00:0a", \
    "02:00:00:00:00:0b"
ST_A, ST_B = "02:00:00:00:0a:01", "02:00:00:00:0b:01"

TOPO = """\
eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/p0.pcap", mac: "{r0}", ipv4: 192.168.0.1/24 }}
  p1: {{ device: "net_pcap1,rx_pcap={tmp}/p1.pcap", mac: "{r1}", ipv4: 10.1.0.254/16 }}
  p2: {{ device: "net_pcap2,rx_pcap={tmp}/p2.pcap" }}
  p3: {{ device: "net_pcap3,rx_pcap={tmp}/p3.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: acl, arp: neigh }} }}
  acl:
    type: acl
    default: deny
    rules:
      - permit-reflect src 192.168.0.0/24
    next: lpm
  lpm:
    type: lpm
    nexthops:
      lan_host: {{ port: p0, mac: "{host}" }}
      lab_gw: {{ port: p1, mac: "{gw}" }}
      far:    {{ via: 10.1.0.77 }}
    routes:
      - {{ prefix: 192.168.0.5/32, via: lan_host }}
      - {{ prefix: 10.1.0.0/16, via: lab_gw }}
      - {{ prefix: 10.3.0.0/16, via: far }}
    next: {{ out: tx, neigh: neigh }}
  neigh: {{ type: neigh, next: tx }}
  rx_l2: {{ type: rx, ports: [p2, p3], next: l2 }}
  l2: {{ type: l2fib, ports: [p2, p3], next: tx }}
  tx: {{ type: tx, ports: [p0, p1, p2, p3] }}
lcores:
  1: [rx, acl, lpm, neigh, tx]
  2: [rx_l2, l2]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def routed(p, src_mac, dst_mac):
    """What a router does to @p (RFC 1812): TTL - 1, new MACs; scapy recomputes the checksum."""
    q = p.copy()
    q[Ether].src, q[Ether].dst = src_mac, dst_mac
    q[IP].ttl -= 1
    del q[IP].chksum
    return Ether(raw(q))


def cases():
    """(name, pipefwd-ctl words, scapy packet they describe, expected path)."""
    lan = Ether(src=HOST, dst=R0)
    out = []
    p = lan / IP(src="192.168.0.2", dst="10.1.2.3", ttl=64, id=1) / UDP(sport=1111, dport=53) / \
        Raw(bytes(18))
    out.append(("routed", "in=p0 eth src=%s ipv4 src=192.168.0.2 dst=10.1.2.3 ttl=64 udp "
                "sport=1111 dport=53" % HOST, p,
                {"stages": ["rx", "acl", "lpm", "tx"], "edges": ["ipv4", "out", "out", "tx"],
                 "out": routed(p, R1, GW), "out_port": "p1",
                 "acl": "session_created=1", "note": "(would open a session)"}))
    # The session the pcap's first frame opened admits its reply.
    p = Ether(src=GW, dst=R1) / IP(src="10.1.0.9", dst="192.168.0.5", ttl=30, id=1) / \
        UDP(sport=53, dport=5555) / Raw(bytes(18))
    out.append(("session reply", "in=p1 eth src=%s ipv4 src=10.1.0.9 dst=192.168.0.5 ttl=30 "
                "udp sport=53 dport=5555" % GW, p,
                {"stages": ["rx", "acl", "lpm", "tx"], "edges": ["ipv4", "out", "out", "tx"],
                 "out": routed(p, R0, HOST), "out_port": "p0", "acl": "session_permit=1",
                 "note": "session hit"}))
    p = Ether(src=GW, dst=R1) / IP(src="10.1.0.9", dst="192.168.0.5", ttl=30, id=1) / \
        TCP(sport=22, dport=4000, flags="S") / Raw(bytes(6))
    out.append(("acl deny", "in=p1 eth src=%s ipv4 src=10.1.0.9 dst=192.168.0.5 ttl=30 tcp "
                "sport=22 dport=4000" % GW, p,
                {"stages": ["rx", "acl"], "edges": ["ipv4", "drop"], "drop": "acl:acl_deny"}))
    p = lan / IP(src="192.168.0.2", dst="10.9.9.9", ttl=64, id=1) / UDP(sport=1024, dport=80) / \
        Raw(bytes(18))
    out.append(("no route", "in=p0 eth src=%s ipv4 src=192.168.0.2 dst=10.9.9.9 udp "
                "sport=1024 dport=80" % HOST, p,
                {"stages": ["rx", "acl", "lpm"], "edges": ["ipv4", "out", "drop"],
                 "drop": "lpm:ip4_no_route"}))
    p = lan / IP(src="192.168.0.2", dst="10.1.2.3", ttl=1, id=1) / UDP(sport=1024, dport=80) / \
        Raw(bytes(18))
    out.append(("ttl 1", "in=p0 eth src=%s ipv4 src=192.168.0.2 dst=10.1.2.3 ttl=1 udp "
                "sport=1024 dport=80" % HOST,
                p, {"stages": ["rx", "acl", "lpm"], "edges": ["ipv4", "out", "drop"],
                    "drop": "lpm:ip4_ttl_expired"}))
    p = lan / IP(src="192.168.0.2", dst="10.3.0.1", ttl=64, id=1) / UDP(sport=1024, dport=80) / \
        Raw(bytes(18))
    out.append(("unresolved next hop", "in=p0 eth src=%s ipv4 src=192.168.0.2 dst=10.3.0.1 udp "
                "sport=1024 dport=80" % HOST, p, {"stages": ["rx", "acl", "lpm", "neigh"],
                            "edges": ["ipv4", "out", "neigh", "held"], "held": "neigh"}))
    p = Ether(src=HOST, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=HOST, psrc="192.168.0.2",
                                                       pdst="192.168.0.1")
    out.append(("arp", "in=p0 eth src=%s arp op=request spa=192.168.0.2 tpa=192.168.0.1" % HOST,
                p, {"stages": ["rx", "neigh", "tx"], "edges": ["arp", "out", "tx"],
                    "out_port": "p0", "arp_reply": "192.168.0.1 > 192.168.0.2",
                    "eth_out": "%s > %s" % (R0, HOST)}))
    p = Ether(src=ST_A, dst=ST_B) / IP(src="172.16.0.1", dst="172.16.0.2") / \
        UDP(sport=7, dport=9) / Raw(bytes(18))
    out.append(("bridged known", "in=p2 eth src=%s dst=%s ipv4 src=172.16.0.1 dst=172.16.0.2 udp "
                "sport=7 dport=9" % (ST_A, ST_B), p, {"stages": ["rx_l2", "l2", "tx"], "edges": ["ipv4", "out", "tx"],
                                    "out_port": "p3"}))
    p = Ether(src="02:00:00:00:0c:01", dst="02:00:00:00:0d:01") / \
        IP(src="172.16.0.3", dst="172.16.0.4") / UDP(sport=7, dport=9) / Raw(bytes(18))
    out.append(("bridged unknown", "in=p2 eth src=02:00:00:00:0c:01 dst=02:00:00:00:0d:01 ipv4 "
                "src=172.16.0.3 dst=172.16.0.4 udp sport=7 dport=9", p,
                {"stages": ["rx_l2", "l2", "tx"], "edges": ["ipv4", "out", "tx"],
                 "out_port": "flood", "flood": "p3"}))
    return out


def state(sock, ctl):
    """Everything a packet could move: counters, gauges, tables (times left out)."""
    cfg = telemetry(sock, "/pipefwd/config")
    s = {"stages": {k: telemetry(sock, "/pipefwd/stages," + k)
                    for k in cfg["keys"]["stages"]},
         "rings": telemetry(sock, "/pipefwd/rings"), "ports": telemetry(sock, "/pipefwd/ports"),
         "totals": telemetry(sock, "/pipefwd/totals")}
    s["totals"].pop("tsc", None)
    for item in s["ports"].values():
        item.pop("link_for_ms", None)     # how long the link has been up
    for k, v in s["stages"].items():
        for item in v.values():
            for t in ("cycles", "cycles_per_packet"):
                item.pop(t, None)
    s["sessions"] = sorted((r["initiator"], r["responder"], r["state"])
                           for r in ctl.json("sessions", "acl", "--all").get("rows", []))
    s["macs"] = sorted((r["mac"], r["port"]) for r in ctl.json("macs", "l2", "--all")
                       .get("rows", []))
    s["neighbors"] = ctl.json("neighbors", "--all").get("rows", [])
    return s


def test_inject(sock, ctl):
    before = state(sock, ctl)
    check(len(before["sessions"]) == 1 and len(before["macs"]) == 2 and
          before["neighbors"] == [], "the pcaps' state: %s %s %s" % (
              before["sessions"], before["macs"], before["neighbors"]))
    for name, words, p, want in cases():
        r = ctl.json("trace", "inject", *words.split())
        steps = [r[str(i)] for i in range(r.get("steps", 0)) if str(i) in r]
        got = [s["stage"] for s in steps]
        check(got == want["stages"], "%s: stages %s, want %s" % (name, got, want["stages"]))
        got = [s["edge"] for s in steps]
        check(got == want["edges"], "%s: edges %s, want %s" % (name, got, want["edges"]))
        check(r.get("frame") == raw(p).hex() + "00" * max(0, 60 - len(raw(p))),
              "%s: the frame built is not the one described: %s, scapy %s" % (
                  name, r.get("frame"), raw(p).hex()))
        first = steps[0] if steps else {}
        check(first.get("len") == max(60, len(raw(p))), "%s: rx step %s" % (name, first))
        last = steps[-1] if steps else {}
        if "drop" in want:
            check(r.get("result") == "dropped" and last.get("drop") == want["drop"],
                  "%s: result %s, drop %s, want %s" % (name, r.get("result"), last.get("drop"),
                                                       want["drop"]))
            continue
        if "held" in want:
            check(r.get("result") == "held by " + want["held"] and
                  "neigh_held=1" in last.get("counters", ""), "%s: %s" % (name, r))
            continue
        check(r.get("result") == "sent" and last.get("out_port") == want["out_port"],
              "%s: result %s on %s, want sent on %s" % (name, r.get("result"),
                                                         last.get("out_port"), want["out_port"]))
        if "flood" in want:
            check(last.get("flood") == want["flood"], "%s: flood %s" % (name, last))
        by = {s["stage"]: s for s in steps}
        if "acl" in want:
            check(want["acl"] in by["acl"].get("counters", "") and
                  want["note"] in by["acl"].get("note", ""), "%s: acl step %s" % (name, by["acl"]))
        q = want.get("out")
        if q is not None:
            check(last.get("eth") == "%s > %s" % (q[Ether].src, q[Ether].dst) and
                  last.get("ttl") == q[IP].ttl and
                  last.get("ip4_checksum") == "0x%04x" % q[IP].chksum and
                  last.get("ip4") == "%s > %s" % (q[IP].src, q[IP].dst),
                  "%s: leaves as %s, want %s ttl %d checksum 0x%04x" % (
                      name, last, q[Ether].summary(), q[IP].ttl, q[IP].chksum))
        if "arp_reply" in want:
            check(last.get("arp") == "reply " + want["arp_reply"] and
                  last.get("eth") == want["eth_out"], "%s: %s" % (name, last))
    after = state(sock, ctl)
    for k in before:
        check(before[k] == after[k], "trace inject changed %s:\n%s\n%s" % (
            k, json.dumps(before[k], sort_keys=True)[:1500],
            json.dumps(after[k], sort_keys=True)[:1500]))
    # The whole FIB by source (the topology's routes, the ports' subnets and addresses).
    want = {"config": {"192.168.0.5/32", "10.1.0.0/16", "10.3.0.0/16"},
            "connected": {"192.168.0.0/24", "10.1.0.0/16"},
            "local": {"192.168.0.1/32", "10.1.0.254/32"}}
    for src, prefixes in want.items():
        rows = ctl.json("routes", "lpm", "--source", src).get("rows", [])
        check({r["prefix"] for r in rows} == prefixes and
              all(r["source"] == src and r["state"] == "installed" for r in rows),
              "routes --source %s: %s" % (src, rows))
    counts = ctl.json("routes", "lpm", "--count")
    check(counts.get("total") == 7 and counts.get("sources") == {
        k: {"installed": len(v)} for k, v in want.items()}, "routes --count: %s" % counts)
    r = ctl("routes", "lpm", "--source", "conf", ok=False)
    check(r.returncode == 2 and "did you mean 'config'" in r.stderr, "--source conf: %d %r" % (
        r.returncode, r.stderr))
    # The text and the errors.
    r = ctl("trace", "inject", *cases()[0][1].split())
    check("result: sent on p1" in r.stdout and "rewrite: eth %s > %s, ttl 63" % (R1, GW)
          in r.stdout, "text: %r" % r.stdout)
    ctl.refused(("trace", "inject", "in=p9", "ipv4", "src=1.1.1.1", "dst=2.2.2.2"),
                "unknown port 'p9' (ports: p0, p1, p2, p3)")
    for bad, words in ((("trace", "inject", "in=p0", "ipv9", "src=1.1.1.1"), "did you mean"),
                       (("trace", "inject", "in=p0", "ipv4", "src=1.1.1.1", "dst=2.2.2.2",
                         "udp", "port=5"), "no field 'port'"),
                       (("trace", "inject", "ipv4", "src=1.1.1.1", "dst=2.2.2.2"), "in=PORT")):
        r = ctl(*bad, ok=False)
        check(r.returncode == 2 and words in r.stderr, "%s: rc %d %r" % (bad, r.returncode,
                                                                        r.stderr))


def main():
    tmp = tempfile.mkdtemp(prefix="pf_inject_")
    proc = None
    try:
        # A LAN host opens a session; a station on each side of the bridge.
        write_pcap(os.path.join(tmp, "p0.pcap"), [raw(
            Ether(src=HOST, dst=R0) / IP(src="192.168.0.5", dst="10.1.0.9") /
            UDP(sport=5555, dport=53) / Raw(bytes(18)))])
        write_pcap(os.path.join(tmp, "p1.pcap"), [])      # read, and nothing comes
        for port, a, b in (("p2", ST_A, ST_B), ("p3", ST_B, ST_A)):
            write_pcap(os.path.join(tmp, port + ".pcap"), [raw(
                Ether(src=a, dst=b) / IP(src="172.16.0.9", dst="172.16.0.8") / UDP() /
                Raw(bytes(18)))])
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(tmp=tmp, r0=R0, r1=R1, gw=GW, host=HOST))
        log = open(os.path.join(tmp, "pipefwd.log"), "w")
        proc = subprocess.Popen([PIPEFWD, "-q", "-j", os.path.join(tmp, "run.json"), topo, "--",
                                 "--file-prefix=" + PREFIX], stdout=log, stderr=subprocess.STDOUT)
        sock = os.path.join(dpdk_rundir(PREFIX), "dpdk_telemetry.v2")
        end, tot = time.monotonic() + 60, {}
        while time.monotonic() < end and tot.get("tx", 0) < 3 and proc.poll() is None:
            time.sleep(0.2)
            try:
                tot = telemetry(sock, "/pipefwd/totals", timeout=5) or {}
            except (OSError, ValueError):
                pass
        if check(tot.get("rx") == 3 and tot.get("tx") == 3, "the pcaps: %s" % tot):
            # Let the bridge's ring and tx flush settle: nothing moves after this.
            time.sleep(0.5)
            test_inject(sock, Ctl(CTL, PREFIX, check))
    except Exception as e:  # report, and keep the files for a look
        traceback.print_exc()
        FAILS.append("exception: %r" % e)
    finally:
        if proc is not None:
            rc = stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
            check(rc == 0, "pipefwd exited %d" % rc)
            st = json.load(open(os.path.join(tmp, "run.json"))) if rc == 0 else {
                "totals": {}, "mbufs_in_use_after_stop": None}
            check(st["totals"]["unaccounted"] == 0 and st["totals"]["rx"] == 3 and
                  st["mbufs_in_use_after_stop"] == 0, "exit report: %s, mbufs %s" % (
                      st["totals"], st["mbufs_in_use_after_stop"]))
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
