#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Table contents on the stats socket (/pipefwd/table, pipefwd-ctl macs, routes,
route, acl, sessions) against a running pipefwd fed by finite pcaps.

One topology, two pipelines on net_pcap/net_null: l2 learns 5000 source MACs
(plus two static entries in two domains); acl (permit-reflect sessions) feeds
lpm with 10,001 routes from a file. Every expected row is computed from the
inputs written here, never from pipefwd's output. Checks: contents, filters,
paging (pages join to the whole table, no row twice), every raw reply within
DPDK 22.11's 16 KiB, and a clean exit.

usage: test_tables.py PIPEFWD PIPEFWD_CTL
"""
import ipaddress
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import ipv4_udp, stop_pipefwd, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "c2_tables_%d" % os.getpid()
FAILS = []
N_MACS, N_ROUTES = 5000, 10000
B0_MAC = "02:00:00:00:00:10"
NH = {"n1": ("b1", "02:00:00:00:01:01"), "n2": ("b2", "02:00:00:00:01:02")}
STATIC = [("02:00:00:00:aa:01", "a1", "lan", 0), ("02:00:00:00:aa:02", "a2", "v10", 10)]

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  a0: {{ device: "net_pcap0,rx_pcap={tmp}/l2.pcap{inf},tx_pcap={tmp}/a0.out.pcap" }}
  a1: {{ device: "net_null0" }}
  a2: {{ device: "net_null1" }}
  b0: {{ device: "net_pcap1,rx_pcap={tmp}/l3.pcap{inf},tx_pcap={tmp}/b0.out.pcap",
        mac: "{b0mac}", ipv4: 192.168.0.1/24 }}
  b1: {{ device: "net_null2", mac: "02:00:00:00:00:11", ipv4: 172.17.0.1/24 }}
  b2: {{ device: "net_null3", mac: "02:00:00:00:00:12", ipv4: 172.18.0.1/24 }}
stages:
  rxa: {{ type: rx, ports: [a0], next: {{ ipv4: l2 }} }}
  l2:
    type: l2fib
    domains:
      lan: {{ ports: [a0, a1] }}
      v10: {{ ports: [a0, a2], vlan: 10 }}
    static:
      - {{ mac: "{s0}", port: a1 }}
      - {{ mac: "{s1}", port: a2 }}
    age_s: {age}
    next: txa
  txa: {{ type: tx, ports: [a0, a1, a2] }}
  rxb: {{ type: rx, ports: [b0], next: {{ ipv4: acl }} }}
  acl:
    type: acl
    rules:
      - "deny src 192.168.0.66"
      - "permit-reflect src 192.168.0.0/24 proto udp dport 53"
      - "permit proto udp"
    default: deny
    sessions: 1024
    session_timeouts: {{ udp: {age} }}
    next: lpm
  lpm:
    type: lpm
    nexthops:
      n1: {{ port: b1, mac: "{n1mac}" }}
      n2: {{ port: b2, mac: "{n2mac}" }}
    routes_file: {tmp}/routes.txt
    next: txb
  txb: {{ type: tx, ports: [b0, b1, b2] }}
lcores:
  1: [rxa, l2, txa, rxb, acl, lpm, txb]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def learned_macs():
    return ["02:10:00:00:%02x:%02x" % (i >> 8, i & 0xff) for i in range(N_MACS)]


def routes():
    """prefix -> next hop: 10,000 /24s (even: n1, odd: n2) and one /32 inside one."""
    r = {}
    for i in range(N_ROUTES):
        r["10.%d.%d.0/24" % (i >> 8, i & 0xff)] = "n1" if i % 2 == 0 else "n2"
    r["10.0.5.7/32"] = "n1"
    return r


def l3_frames():
    """(frames, expected per-rule hits, expected sessions) for the acl stage."""
    eth = mac_bytes(B0_MAC) + mac_bytes("02:00:00:00:09:09") + b"\x08\x00"
    ip = lambda s: ipaddress.IPv4Address(s).packed  # noqa: E731
    frames, hits, sessions = [], {1: 0, 2: 0, 3: 0, 0: 0}, set()
    for k in range(30):                 # rule 1: deny one host
        frames.append(ipv4_udp(eth, ip("192.168.0.66"), ip("10.0.1.1"), k, 5000, 53, bytes(18)))
        hits[1] += 1
    for h in range(10):                 # rule 2 opens a session; the next 3 ride on it
        for k in range(4):
            frames.append(ipv4_udp(eth, ip("192.168.0.%d" % (10 + h)), ip("10.0.2.2"), k,
                                   1000 + h, 53, bytes(18)))
        hits[2] += 1
        sessions.add(("192.168.0.%d:%d" % (10 + h, 1000 + h), "10.0.2.2:53"))
    for k in range(20):                 # rule 3
        frames.append(ipv4_udp(eth, ip("192.168.0.7"), ip("10.0.3.3"), k, 7, 999, bytes(18)))
        hits[3] += 1
    return frames, hits, sessions


class Tel:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(10)
        self.s.connect(path)
        self.s.recv(4096)

    def raw(self, cmd):
        self.s.send(cmd.encode())
        data = self.s.recv(65536)
        return len(data), json.loads(data)["/pipefwd/table"]


def ctl(*args):
    r = subprocess.run([CTL, "--file-prefix", PREFIX] + list(args), capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, "pipefwd-ctl %s: rc %d %s" % (" ".join(args), r.returncode,
                                                           r.stderr))
    return r


def ctl_json(*args):
    r = ctl("--json", *args)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def pages(tel, params, want_total):
    """Walk a table page by page with raw commands; every reply within 16 KiB."""
    rows, offset, n_pages = [], 0, 0
    while offset >= 0 and n_pages < 1000:
        n, r = tel.raw("/pipefwd/table,%s,offset=%d,limit=512" % (params, offset))
        n_pages += 1
        check(n <= 16384, "%s: reply of %d bytes > 16 KiB" % (params, n))
        cols = r["columns"]
        check(all(len(r[c]) == r["count"] for c in cols),
              "%s: columns disagree with count %d" % (params, r["count"]))
        check(r["total"] == want_total, "%s: total %d, want %d" % (params, r["total"],
                                                                   want_total))
        rows += [dict(zip(cols, v)) for v in zip(*(r[c] for c in cols))]
        if r["count"] == 0:
            break
        offset = r["next"]
    check(n_pages > 1, "%s: %d rows fit one 16 KiB page?" % (params, len(rows)))
    return rows


def start(tmp, name, infinite):
    """Write the inputs and start pipefwd: (proc, log, socket, rundir, frames, hits, sessions)."""
    with open(os.path.join(tmp, "routes.txt"), "w") as f:
        for p, nh in routes().items():
            f.write("%s %s\n" % (p, nh))
    src_eth = [mac_bytes("ff:ff:ff:ff:ff:ff") + mac_bytes(m) + b"\x08\x00"
               for m in learned_macs()]
    write_pcap(os.path.join(tmp, "l2.pcap"),
               [ipv4_udp(e, bytes([10, 9, 0, 1]), bytes([10, 9, 0, 2]), i, 1, 2, bytes(18))
                for i, e in enumerate(src_eth)])
    frames, hits, sessions = l3_frames()
    write_pcap(os.path.join(tmp, "l3.pcap"), frames)
    topo = os.path.join(tmp, name + ".yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp, b0mac=B0_MAC, s0=STATIC[0][0], s1=STATIC[1][0],
                            n1mac=NH["n1"][1], n2mac=NH["n2"][1],
                            inf=",infinite_rx=1" if infinite else "", age=1 if infinite else 300))
    log = open(os.path.join(tmp, name + ".log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-q", "-j", os.path.join(tmp, name + ".json"), topo,
                             "--", "--file-prefix=" + PREFIX], stdout=log,
                            stderr=subprocess.STDOUT)
    rundir = "/var/run/dpdk/" + PREFIX if os.geteuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", PREFIX)
    return proc, log, os.path.join(rundir, "dpdk_telemetry.v2"), rundir, frames, hits, sessions


def stop(proc, log, rundir):
    return stop_pipefwd(proc, log, rundir)


def test_tables(tmp):
    proc, log, sock, rundir, frames, hits, sessions = start(tmp, "finite", False)
    try:
        run_checks(sock, hits, sessions, len(frames))
    finally:
        rc = stop(proc, log, rundir)
    check(rc == 0, "pipefwd exit %d" % rc)
    # the exit report reads raw counters: every packet since start, accounted
    try:
        with open(os.path.join(tmp, "finite.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        check(False, "report.json: %s" % e)
        return
    n_l3 = len(frames)
    check(rep["totals"] == {"rx": N_MACS + n_l3, "tx": N_MACS + n_l3 - hits[1], "replicas": 0,
                            "dropped": hits[1], "in_flight": 0, "unaccounted": 0},
          "exit totals: %s" % rep["totals"])
    check(rep["stages"]["l2"]["packets"] == N_MACS and rep["stages"]["acl"]["packets"] == n_l3,
          "exit report after clear: l2 %s acl %s" % (rep["stages"]["l2"]["packets"],
                                                     rep["stages"]["acl"]["packets"]))


def wait_idle(n_l3):
    """Until every input frame went through (finite pcaps)."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        r = subprocess.run([CTL, "--file-prefix", PREFIX, "--json", "totals"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            t = json.loads(r.stdout)
            if t.get("rx", 0) == N_MACS + n_l3 and t.get("in_flight", 1) == 0:
                return True
        time.sleep(0.2)
    return False


def run_checks(sock, hits, sessions, n_l3):
    if not check(wait_idle(n_l3), "pipefwd never took all %d frames" % (N_MACS + n_l3)):
        return
    tel = Tel(sock)

    # l2fib: the learned set and the static entries, filters, paging
    want = {m: ("a0", "lan", 0, "learned") for m in learned_macs()}
    want.update({m: (p, d, v, "static") for m, p, d, v in STATIC})
    rows = pages(tel, "l2,macs", len(want))
    got = {r["mac"]: (r["port"], r["domain"], r["vlan"], r["type"]) for r in rows}
    check(len(rows) == len(got), "macs: %d rows, %d distinct" % (len(rows), len(got)))
    check(got == want, "macs: table differs from inputs (%d vs %d entries)" %
          (len(got), len(want)))
    check(all(0 <= r["age_s"] < 600 for r in rows), "macs: age out of range")
    j = ctl_json("macs", "l2", "--port", "a0", "--all")
    check(j.get("total") == N_MACS and len(j.get("rows", [])) == N_MACS,
          "macs --port a0: %s of %d" % (j.get("total"), N_MACS))
    j = ctl_json("macs", "l2", "--vlan", "10")
    check([r["mac"] for r in j.get("rows", [])] == [STATIC[1][0]],
          "macs --vlan 10: %s" % j.get("rows"))
    j = ctl_json("macs", "l2", "--limit", "7")
    check(len(j.get("rows", [])) == 7 and j.get("total") == len(want),
          "macs --limit 7: %d rows, total %s" % (len(j.get("rows", [])), j.get("total")))
    out = ctl("macs", "l2", "--vlan", "0", "--limit", "3").stdout
    check("(3 of %d shown" % (N_MACS + 1) in out and out.startswith("mac"),
          "macs table text: %r" % out[:300])

    # lpm: the route list in prefix order, the port filter, lookups
    rt = routes()
    order = sorted(rt, key=lambda p: (int(ipaddress.IPv4Network(p).network_address),
                                      ipaddress.IPv4Network(p).prefixlen))
    # The ports' own follow the configured routes: a connected subnet and a local
    # address for each port with an address (b0, b1, b2).
    own = {("192.168.0.0/24", "connected"), ("192.168.0.1/32", "local"),
           ("172.17.0.0/24", "connected"), ("172.17.0.1/32", "local"),
           ("172.18.0.0/24", "connected"), ("172.18.0.1/32", "local")}
    rows = pages(tel, "lpm,routes", len(rt) + len(own))
    check({(r["prefix"], r["source"]) for r in rows if r["source"] != "config"} == own,
          "routes: the connected and local prefixes: %s" %
          sorted((r["prefix"], r["source"]) for r in rows if r["source"] != "config"))
    rows = [r for r in rows if r["source"] == "config"]
    check([r["prefix"] for r in rows] == order, "routes: not the configured list in order")
    check(all(r["nexthop"] == rt[r["prefix"]] and r["port"] == NH[r["nexthop"]][0] and
              r["mac"] == NH[r["nexthop"]][1] for r in rows), "routes: wrong next hop fields")
    j = ctl_json("routes", "lpm", "--port", "b2", "--all")
    check(j.get("total") == sum(1 for v in rt.values() if v == "n2") + 2,
          "routes --port b2: total %s" % j.get("total"))
    for addr, want_r in (("10.0.5.7", ("route", "10.0.5.7/32", "n1")),
                         ("10.0.5.8", ("route", "10.0.5.0/24", "n2")),
                         ("10.39.15.200", ("route", "10.39.15.0/24", "n2")),
                         ("8.8.8.8", ("no_route", None, None)),
                         ("172.17.0.1", ("local", "172.17.0.1/32", None))):
        j = ctl_json("route", "lpm", addr)
        check((j.get("result"), j.get("prefix"), j.get("nexthop")) == want_r,
              "route %s: %s, want %s" % (addr, j, want_r))
    out = ctl("route", "lpm", "10.0.5.8").stdout
    check("10.0.5.8 via 10.0.5.0/24: route n2 (02:00:00:00:01:02) port b2" in out,
          "route text: %r" % out)
    r = subprocess.run([CTL, "--file-prefix", PREFIX, "route", "lpm", "10.0.5"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "Traceback" not in r.stderr, "route bad addr: %r" % r.stderr)

    # acl: rules with hits, sessions from the permit-reflect flows
    j = ctl_json("acl", "acl")
    check([(r["rule"], r["hits"]) for r in j.get("rows", [])] ==
          [(k, hits[k]) for k in (1, 2, 3)], "acl hits: %s, want %s" % (j.get("rows"), hits))
    check(j.get("default") == "deny" and j.get("default_hits") == hits[0],
          "acl default: %s" % j)
    check(j.get("rows", [{}])[0].get("text", "").startswith("deny"), "acl text: %s" % j)
    j = ctl_json("sessions", "acl")
    got = {(r["initiator"], r["responder"]) for r in j.get("rows", [])}
    check(got == sessions, "sessions: %s, want %s" % (sorted(got), sorted(sessions)))
    check(all(r["proto"] == 17 and r["state"] == "open" and 0 < r["expires_ms"] <= 300000
              for r in j.get("rows", [])), "session fields: %s" % j.get("rows"))

    for name, want_t in (("l2", ["macs"]), ("lpm", ["routes", "lookup"]),
                         ("acl", ["rules", "sessions", "match"]), ("txa", None)):
        got_t = ctl_json("stages", name).get(name, {}).get("tables")
        check(got_t == want_t, "stages %s: tables %s, want %s" % (name, got_t, want_t))

    test_clear(n_l3, hits)

    # errors answer null (pipefwd-ctl: a message, exit 1), never a crash
    for bad in ("l2,routes", "nosuch,macs", "l2,macs,offset=x", "l2,macs,port=zz",
                "txa,macs", "l2"):
        n, r = tel.raw("/pipefwd/table," + bad)
        check(r is None, "/pipefwd/table,%s: %s" % (bad, r))


def stage(name):
    return ctl_json("stages", name).get(name, {})


def test_clear(n_l3, hits):
    """Clear one stage, then everything: replies count from the clear, totals do not."""
    n_out = n_l3 - hits[1]
    check(stage("l2").get("packets") == N_MACS, "l2 packets before clear: %s" % stage("l2"))
    j = ctl_json("clear", "l2")
    check(j.get("cleared") == 1, "clear l2: %s" % j)
    l2, acl = stage("l2"), stage("acl")
    check(l2.get("packets") == 0 and l2.get("bursts") == 0 and
          sum(l2.get("edges", {1: 1}).values()) == 0 and
          l2.get("counters", {}).get("learned", 1) == 0,
          "l2 after clear l2: %s" % l2)
    check(l2.get("gauges", {}).get("entries") == N_MACS + len(STATIC),
          "clear touched the MAC table: %s" % l2.get("gauges"))
    check(acl.get("packets") == n_l3 and acl.get("drops", {}).get("acl_deny") == hits[1],
          "acl after clear l2: %s" % acl)
    ring = "rxb->acl"
    check(ctl_json("clear", ring).get("cleared") == 1, "clear %s" % ring)
    r = subprocess.run([CTL, "--file-prefix", PREFIX, "clear", "nosuch"], capture_output=True,
                       text=True)
    check(r.returncode == 1 and "Traceback" not in r.stderr, "clear nosuch: %r" % r.stderr)
    out = ctl("clear").stdout
    check(out.startswith("cleared %d stages and rings" % (7 + 5)), "clear: %r" % out)
    acl, ports = stage("acl"), ctl_json("ports")
    check(acl.get("packets") == 0 and acl.get("dropped") == 0, "acl after clear: %s" % acl)
    check(all(p.get("rx") == 0 and p.get("tx") == 0 and p.get("ipackets") == 0
              for p in ports.values()), "ports after clear: %s" % ports)
    rings = ctl_json("rings")
    check(all(r.get("enqueued") == 0 and r.get("hwm") == 0 for r in rings.values()),
          "rings after clear: %s" % rings)
    t = ctl_json("totals")
    check(t.get("rx") == N_MACS + n_l3 and t.get("tx") == N_MACS + n_out and
          t.get("dropped") == hits[1], "totals after clear: %s" % t)


def test_churn(tmp):
    """Pages read while the data path learns, ages (age_s 1) and expires sessions
    (udp 1 s) under infinite_rx: every row is one the inputs can produce."""
    proc, log, sock, rundir, frames, hits, sessions = start(tmp, "churn", True)
    macs = set(learned_macs()) | {m for m, _, _, _ in STATIC}
    try:
        end = time.monotonic() + 20
        while time.monotonic() < end and subprocess.run(
                [CTL, "--file-prefix", PREFIX, "totals"], capture_output=True).returncode:
            time.sleep(0.2)
        tel = Tel(sock)
        n_rows = n_sess = 0
        end = time.monotonic() + 8
        while time.monotonic() < end:
            for params in ("l2,macs,limit=512", "l2,macs,offset=300,limit=512",
                           "acl,sessions,limit=512", "acl,rules"):
                n, r = tel.raw("/pipefwd/table," + params)
                check(r is not None and n <= 16384, "churn %s: %s bytes" % (params, n))
                if r is None:
                    continue
                if params.startswith("l2"):
                    bad = [m for m in r["mac"] if m not in macs]
                    check(not bad, "churn: MACs never sent: %s" % bad[:5])
                    n_rows += r["count"]
                elif params.startswith("acl,s"):
                    got = set(zip(r["initiator"], r["responder"]))
                    check(got <= sessions, "churn: sessions never opened: %s" % (got - sessions))
                    n_sess += r["count"]
        check(n_rows > 0 and n_sess > 0, "churn: %d MAC rows, %d session rows read" %
              (n_rows, n_sess))
        st = ctl_json("stages", "l2").get("l2", {})
        check(st.get("counters", {}).get("aged", 0) > 0, "churn: nothing aged: %s" % st)
    finally:
        rc = stop(proc, log, rundir)
    check(rc == 0, "churn: pipefwd exit %d" % rc)
    try:
        with open(os.path.join(tmp, "churn.json")) as f:
            t = json.load(f)["totals"]
        check(t["unaccounted"] == 0 and t["in_flight"] == 0 and
              t["rx"] + t["replicas"] == t["tx"] + t["dropped"], "churn totals: %s" % t)
    except (OSError, ValueError, KeyError) as e:
        check(False, "churn report: %s" % e)


def main():
    tmp = tempfile.mkdtemp(prefix="pf_tables_")
    try:
        test_tables(tmp)
        test_churn(tmp)
    finally:
        if not FAILS and not os.environ.get("PF_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("logs kept in " + tmp)
    print("tables: %s" % ("ok" if not FAILS else "%d failures" % len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
