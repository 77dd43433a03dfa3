#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live table changes against a running pipefwd (pipefwd-ctl route-add/-del,
mac-add/-del, rule-add/-del, mac-flush, changes [--save], reload).

Traffic loops (net_pcap infinite_rx) into net_null sinks, so the effect of a
change shows as counters that start or stop rising. What each flow should do
comes from the topology written here (which prefix, MAC and rule sends it
where), never from pipefwd's output:
 - l3: UDP to 10.50.0.1 (no route until one is added; then out b2, the next
   hop's port), to 10.60.0.1 (route via n1: out b1; an added deny rule for
   10.60/16 drops it as acl_deny, counted on that rule).
 - l2: frames to 02:00:00:00:aa:05 (unknown: flooded to a1 and a2; once a
   static entry puts it on a2, only a2); a finite pcap on a3 makes 50 learned
   MACs, which mac-flush removes (the table view shows none).
Then `changes --save` writes the route file and the topology (checked with
pipefwd --check and for the entries), and a reload after an unsaved change
says it discarded it. The run must exit cleanly (accounting exact).

usage: test_live.py PIPEFWD PIPEFWD_CTL
"""
import ipaddress
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import Ctl, ipv4_udp, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "clive_%d" % os.getpid()
FAILS = []
B0_MAC = "02:00:00:00:00:10"
STATION = "02:00:00:00:aa:05"       # the unicast destination on the l2 side
SRC_STATIC = "02:00:00:00:aa:01"    # source of the looping l2 stream: static, never learned
N_LEARN = 50

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  a0: {{ device: "net_pcap0,rx_pcap={tmp}/l2.pcap,infinite_rx=1" }}
  a1: {{ device: "net_null0" }}
  a2: {{ device: "net_null1" }}
  a3: {{ device: "net_pcap1,rx_pcap={tmp}/learn.pcap" }}
  b0: {{ device: "net_pcap2,rx_pcap={tmp}/l3.pcap,infinite_rx=1", mac: "{b0mac}",
        ipv4: 192.168.0.1/24 }}
  b1: {{ device: "net_null2", mac: "02:00:00:00:00:11", ipv4: 172.17.0.1/24 }}
  b2: {{ device: "net_null3", mac: "02:00:00:00:00:12", ipv4: 172.18.0.1/24 }}
  c0: {{ device: "net_pcap3,rx_pcap={tmp}/learn.pcap" }}
  c1: {{ device: "net_null4" }}
stages:
  rxa: {{ type: rx, ports: [a0, a3], next: {{ ipv4: l2 }} }}
  l2:
    type: l2fib
    domains:
      lan: {{ ports: [a0, a1, a2, a3] }}
    static:
      - {{ mac: "{src}", port: a0 }}
    age_s: 300
    next: txa
  txa: {{ type: tx, ports: [a0, a1, a2, a3] }}
  rxb: {{ type: rx, ports: [b0], next: {{ ipv4: acl }} }}
  acl:
    type: acl
    rules:
      - "permit proto udp"
    default: deny
    next: lpm
  lpm:
    type: lpm
    nexthops:
      n1: {{ port: b1, mac: "02:00:00:00:01:01" }}
      n2: {{ port: b2, mac: "02:00:00:00:01:02" }}
    routes_file: routes.txt
    next: txb
  txb: {{ type: tx, ports: [b0, b1, b2] }}
  rxc: {{ type: rx, ports: [c0], next: {{ ipv4: tiny }} }}
  tiny:
    type: l2fib
    ports: [c0, c1]
    table_size: 1
    static:
      - {{ mac: "02:00:00:00:cc:01", port: c1 }}
    next: txc
  txc: {{ type: tx, ports: [c0, c1] }}
lcores:
  1: [rxa, l2, txa, rxb, acl, lpm, txb, rxc, tiny, txc]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip(s):
    return ipaddress.IPv4Address(s).packed


ctl = Ctl(CTL, PREFIX, check)
ctl_json = ctl.json
refused = ctl.refused


def sample():
    """Counters the checks compare: port tx, lpm and acl drops, acl hits per rule."""
    ports = ctl_json("ports")
    st = ctl_json("stages")
    return {"tx": {p: ports[p]["tx"] for p in ports},
            "no_route": st["lpm"]["drops"]["ip4_no_route"],
            "acl_deny": st["acl"]["drops"]["acl_deny"]}


def rates(secs=0.4):
    """Counter increases over @secs, sampled after the change has settled."""
    time.sleep(0.3)      # packets already past the stage when it changed drain first
    a = sample()
    time.sleep(secs)
    b = sample()
    return {"tx": {p: b["tx"][p] - a["tx"][p] for p in a["tx"]},
            "no_route": b["no_route"] - a["no_route"], "acl_deny": b["acl_deny"] - a["acl_deny"]}


def wait_up(sock):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if os.path.exists(sock) and ctl("totals", ok=False).returncode == 0:
            t = ctl_json("totals")
            if t.get("rx", 0) > 1000:
                return True
        time.sleep(0.2)
    return False


def macs_learned():
    j = ctl_json("macs", "l2", "--all")
    return sorted(r["mac"] for r in j.get("rows", []) if r["type"] == "learned")


def run(tmp, sock):
    if not check(wait_up(sock), "pipefwd never forwarded"):
        return
    # ---- routes: none for 10.50/16 yet -> no_route; added -> out b2; deleted -> no_route
    r = rates()
    check(r["no_route"] > 0 and r["tx"]["b2"] == 0,
          "before route-add: no_route +%d, b2 tx +%d" % (r["no_route"], r["tx"]["b2"]))
    refused(("route-add", "lpm", "10.50.0.1/16", "n2"), "host bits set")
    refused(("route-add", "lpm", "10.50.0.0/33", "n2"), "bad prefix")
    refused(("route-add", "lpm", "10.50.0.0/16", "n9"), "unknown next hop 'n9'")
    refused(("route-add", "lpm", "10.60.0.0/16", "n2"), "exists")
    refused(("route-del", "lpm", "10.51.0.0/16"), "no route 10.51.0.0/16")
    refused(("route-add", "nosuch", "10.50.0.0/16", "n2"), "unknown stage")
    out = ctl("route-add", "lpm", "10.50.0.0/16", "n2").stdout
    check("10.50.0.0/16 n2" in out, "route-add output: %r" % out)
    j = ctl_json("route", "lpm", "10.50.0.1")
    check(j.get("prefix") == "10.50.0.0/16" and j.get("nexthop") == "n2",
          "lookup after route-add: %s" % j)
    r = rates()
    check(r["no_route"] == 0 and r["tx"]["b2"] > 0,
          "after route-add: no_route +%d, b2 tx +%d" % (r["no_route"], r["tx"]["b2"]))
    ctl("route-del", "lpm", "10.50.0.0/16")
    r = rates()
    check(r["no_route"] > 0 and r["tx"]["b2"] == 0,
          "after route-del: no_route +%d, b2 tx +%d" % (r["no_route"], r["tx"]["b2"]))
    check(ctl_json("changes")["head"]["unsaved"] == 0, "add then del left a change")

    # ---- static MAC: unknown unicast floods to a1 and a2; static on a2 -> only a2
    r = rates()
    check(r["tx"]["a1"] > 0 and r["tx"]["a2"] > 0, "flooding before mac-add: %s" % r["tx"])
    refused(("mac-add", "l2", STATION, "zz"), "unknown port 'zz'")
    refused(("mac-add", "l2", "01:00:5e:00:00:01", "a2"), "group address")
    refused(("mac-add", "tiny", "02:00:00:00:cc:02", "c1"), "table full")
    check(ctl_json("changes")["head"]["refused_full"] == 1, "refused_full counter")
    ctl("mac-add", "l2", STATION, "a2")
    r = rates()
    check(r["tx"]["a1"] == 0 and r["tx"]["a2"] > 0, "after mac-add: %s" % r["tx"])
    j = ctl_json("macs", "l2", "--all")
    check(any(x["mac"] == STATION and x["port"] == "a2" and x["type"] == "static"
              for x in j.get("rows", [])), "static entry not in the table: %s" % j)

    # ---- flush learned MACs: per port, then all; the table view empties
    want = sorted("02:20:00:00:00:%02x" % i for i in range(N_LEARN))
    check(macs_learned() == want, "learned: %d MACs, want %d" % (len(macs_learned()), N_LEARN))
    j = ctl_json("mac-flush", "l2", "--port", "a1")
    check(j.get("flushed") == 0, "flush port a1: %s" % j)
    refused(("mac-flush", "l2", "--domain", "nosuch"), "unknown domain")
    j = ctl_json("mac-flush", "l2", "--domain", "lan")
    check(j.get("flushed") == N_LEARN, "flush domain lan: %s" % j)
    check(macs_learned() == [], "learned after flush: %s" % macs_learned()[:5])
    j = ctl_json("mac-flush", "l2")
    check(j.get("flushed") == 0, "flush all after flush: %s" % j)
    j = ctl_json("macs", "l2", "--all")
    check(sorted(x["mac"] for x in j.get("rows", [])) == sorted([SRC_STATIC, STATION]),
          "statics after flush: %s" % j.get("rows"))

    # ---- a deny rule: its hits and acl_deny rise, b1 (10.60 via n1) stops
    r = rates()
    check(r["tx"]["b1"] > 0 and r["acl_deny"] == 0, "before rule-add: %s" % r)
    refused(("rule-add", "acl", "deny", "dst", "10.60.0.0/33"), "bad rule")
    ctl("rule-add", "acl", "deny", "dst", "10.60.0.0/16", "priority", "10")
    hits0 = ctl_json("acl", "acl")["rows"]
    r = rates()
    hits1 = ctl_json("acl", "acl")["rows"]
    check(r["tx"]["b1"] == 0 and r["acl_deny"] > 0, "after rule-add: %s" % r)
    check(len(hits1) == 2 and hits1[1]["text"].startswith("deny") and
          hits1[1]["hits"] > hits0[1]["hits"], "deny rule hits: %s -> %s" % (hits0, hits1))

    # ---- changes: a route to keep, entries of the files deleted, the list, --save
    ctl("route-add", "lpm", "10.70.0.0/16", "n2")
    ctl("route-del", "lpm", "10.60.0.0/16")                 # a line of routes.txt
    ctl("rule-add", "acl", "permit", "proto", "tcp")
    ctl("rule-del", "acl", "permit", "proto", "udp")        # an item of the inline list
    ctl("mac-del", "tiny", "02:00:00:00:cc:01")             # the only item of a list
    j = ctl_json("changes")
    got = [(c["op"], c["stage"], c["table"], c["entry"]) for c in j["changes"]]
    check(got == [("add", "l2", "macs", STATION + " a2 lan"),
                  ("add", "acl", "rules", "deny dst 10.60.0.0/16 priority 10"),
                  ("add", "lpm", "routes", "10.70.0.0/16 n2"),
                  ("del", "lpm", "routes", "10.60.0.0/16"),
                  ("add", "acl", "rules", "permit proto tcp"),
                  ("del", "acl", "rules", "permit proto udp"),
                  ("del", "tiny", "macs", "02:00:00:00:cc:01 default")], "changes: %s" % got)
    out = ctl("changes").stdout
    check("+++ " in out and "+10.70.0.0/16 n2" in out, "changes diff: %r" % out)
    topo = os.path.join(tmp, "live.yaml")
    mode = os.stat(topo).st_mode
    before = open(topo).read()
    out = ctl("changes", "--save").stdout
    check("wrote %s" % topo in out and "wrote %s" % os.path.join(tmp, "routes.txt") in out,
          "changes --save output: %r" % out)
    check("applied" in out, "reload after save: %r" % out)
    after = open(topo).read()
    check(os.stat(topo).st_mode == mode, "mode changed")
    check('- "deny dst 10.60.0.0/16 priority 10"' in after and STATION in after and
          '- "permit proto tcp"' in after and "permit proto udp" not in after and
          "cc:01" not in after and after != before, "saved topology:\n%s" % after)
    check(open(os.path.join(tmp, "routes.txt")).read() == "# routes\n10.70.0.0/16 n2\n",
          "saved routes file: %r" % open(os.path.join(tmp, "routes.txt")).read())
    c = subprocess.run([PIPEFWD, "--check", topo], capture_output=True, text=True)
    check(c.returncode == 0, "--check of the saved file: %s %s" % (c.stdout, c.stderr))
    check(ctl_json("changes")["head"]["unsaved"] == 0, "changes left after save")
    r = rates()
    check(r["tx"]["a1"] == 0 and r["tx"]["b1"] == 0, "saved state not running: %s" % r)

    # ---- a reload discards an unsaved change and says so
    ctl("route-add", "lpm", "10.80.0.0/16", "n1")
    out = ctl("reload").stdout
    check("discarded 1 unsaved live change" in out and "10.80.0.0/16" in out,
          "reload output: %r" % out)
    j = ctl_json("route", "lpm", "10.80.0.1")
    check(j.get("prefix") != "10.80.0.0/16", "10.80/16 still routed after reload: %s" % j)
    check(ctl_json("changes")["head"]["discarded"] == 1, "discarded count")


def main():
    tmp = tempfile.mkdtemp(prefix="pf_live_")
    eth = lambda d, s: mac_bytes(d) + mac_bytes(s) + b"\x08\x00"  # noqa: E731
    l3 = []
    for k in range(64):
        e = eth(B0_MAC, "02:00:00:00:09:09")
        l3.append(ipv4_udp(e, ip("192.168.0.7"), ip("10.50.0.1"), k, 7, 9, bytes(18)))
        l3.append(ipv4_udp(e, ip("192.168.0.7"), ip("10.60.0.1"), k, 7, 9, bytes(18)))
    write_pcap(os.path.join(tmp, "l3.pcap"), l3)
    write_pcap(os.path.join(tmp, "l2.pcap"),
               [ipv4_udp(eth(STATION, SRC_STATIC), ip("10.9.0.1"), ip("10.9.0.2"), k, 1, 2,
                         bytes(18)) for k in range(64)])
    write_pcap(os.path.join(tmp, "learn.pcap"),
               [ipv4_udp(eth("ff:ff:ff:ff:ff:ff", "02:20:00:00:00:%02x" % i), ip("10.9.0.3"),
                         ip("10.9.0.4"), i, 1, 2, bytes(18)) for i in range(N_LEARN)])
    with open(os.path.join(tmp, "routes.txt"), "w") as f:
        f.write("# routes\n10.60.0.0/16 n1\n")
    topo = os.path.join(tmp, "live.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp, b0mac=B0_MAC, src=SRC_STATIC))
    os.chmod(topo, 0o640)
    log = open(os.path.join(tmp, "live.log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-q", "-j", os.path.join(tmp, "live.json"), topo, "--",
                             "--file-prefix=" + PREFIX], stdout=log, stderr=subprocess.STDOUT)
    rundir = "/var/run/dpdk/" + PREFIX if os.geteuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", PREFIX)
    try:
        run(tmp, os.path.join(rundir, "dpdk_telemetry.v2"))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.close()
        shutil.rmtree(rundir, ignore_errors=True)
    check(rc == 0, "pipefwd exit %d: %s" % (rc, open(os.path.join(tmp, "live.log")).read()[-2000:]))
    if FAILS:
        print("kept %s" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
