#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Packet trace (pipefwd-ctl trace) and the exact ring high-water mark after a clear.

Trace: rx (p0) -> acl -> lpm -> tx on lcore 1, rx_l2 (p2) -> l2 on lcore 2 and
on to tx across a ring. p0 replays 7 frames forever (4 routed, TTL 1, bad IPv4
checksum, TCP to port 23 which the ACL denies), p2 3 broadcast frames. The
expected path, edges, drop reasons and fields of each frame come from scapy
(the frames' own fields, the checksum after the TTL decrement recomputed by
scapy), never from pipefwd: 7 packets traced at rx are the 7 frames once each.
Tracing at l2 and at every source, and the exit report (nothing unaccounted,
no mbuf leaked, the drop counters in the frames' proportions) complete it.

hwm: rx -> xc on lcore 1, a ring of 1024 to a `delay` stage that takes one
burst a second (pipefwd-test). The ring fills, the input ends; a clear of the
ring must give the mark since the clear exactly (hwm_exact 1), and it must
hold while the consumer drains the ring: before, the bound fell with `used`.
A reload (us: 0) then lets the rest drain before the exit.

usage: test_trace.py PIPEFWD PIPEFWD_TEST PIPEFWD_CTL
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from scapy.all import IP, TCP, UDP, Ether, Raw, raw  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))
from pftest import finish, numbered_udp, telemetry, write_pcap  # noqa: E402

PIPEFWD, PIPEFWD_TEST, CTL = sys.argv[1], sys.argv[2], sys.argv[3]
TAG = "trc_t%d" % os.getpid()
FAILS = []
R0, R1, GW, HOST = ("02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:00:0b",
                    "02:00:00:00:00:0a")

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/p0.pcap,infinite_rx=1", mac: "{r0}", ipv4: 192.168.0.1/24 }}
  p1: {{ device: "net_null0", mac: "{r1}", ipv4: 10.1.0.254/16 }}
  p2: {{ device: "net_pcap2,rx_pcap={tmp}/p2.pcap,infinite_rx=1" }}
  p3: {{ device: "net_null1" }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: acl }} }}
  acl:
    type: acl
    default: permit
    rules:
      - deny proto tcp dport 23
    next: lpm
  lpm:
    type: lpm
    nexthops:
      lab_gw: {{ port: p1, mac: "{gw}" }}
    routes:
      - {{ prefix: 10.1.0.0/16, via: lab_gw }}
    next: tx
  rx_l2: {{ type: rx, ports: [p2], next: l2 }}
  l2: {{ type: l2fib, ports: [p2, p3], next: tx }}
  tx: {{ type: tx, ports: [p1, p3] }}
lcores:
  1: [rx, acl, lpm, tx]
  2: [rx_l2, l2]
"""

HWM_TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/hwm.pcap" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: xc }} }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: slow }}
  slow: {{ type: delay, us: {us}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  xc->slow: {{ size: 1024 }}
lcores:
  1: [rx, xc]
  2: [slow, tx]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def frames():
    """The p0 frames and, per frame, what the model says happens to it."""
    def udp(dst, ttl, ip_id, sport):
        return (Ether(src=HOST, dst=R0) / IP(src="192.168.0.2", dst=dst, ttl=ttl, id=ip_id) /
                UDP(sport=sport, dport=53) / Raw(b"x" * 18))
    out = []
    for i in range(4):
        p = udp("10.1.%d.%d" % (i, i + 1), 64, 100 + i, 1000 + i)
        # Routed: TTL - 1, MACs rewritten to p1's and the next hop's; scapy
        # recomputes the checksum (the independent model of RFC 1624).
        fwd = p.copy()
        fwd[Ether].src, fwd[Ether].dst = R1, GW
        fwd[IP].ttl -= 1
        del fwd[IP].chksum
        fwd = Ether(raw(fwd))
        out.append((p, {"path": ["rx", "acl", "lpm", "tx"], "edges": ["ipv4", "out", "out", "tx"],
                        "drop": None, "out": fwd}))
    out.append((udp("10.1.9.9", 1, 200, 7),
                {"path": ["rx", "acl", "lpm"], "edges": ["ipv4", "out", "drop"],
                 "drop": "lpm:ip4_ttl_expired"}))
    bad = Ether(raw(udp("10.1.9.8", 9, 201, 8)))
    bad[IP].chksum ^= 0x1111
    out.append((bad, {"path": ["rx"], "edges": ["drop"], "drop": "rx:ip4_bad_checksum"}))
    out.append((Ether(src=HOST, dst=R0) / IP(src="192.168.0.2", dst="10.1.9.7", ttl=9, id=202) /
                TCP(sport=9, dport=23) / Raw(b"w" * 18),
                {"path": ["rx", "acl"], "edges": ["ipv4", "drop"], "drop": "acl:acl_deny"}))
    return [(Ether(raw(p)), want) for p, want in out]


L2_MACS = ["02:00:00:00:01:%02x" % i for i in range(3)]


def l2_frames():
    return [Ether(src=m, dst="ff:ff:ff:ff:ff:ff") / IP(src="172.16.0.%d" % i, dst="172.16.0.99") /
            UDP(sport=5, dport=6) for i, m in enumerate(L2_MACS)]


class Run:
    def __init__(self, tmp, name, pipefwd, topo, env=None):
        self.prefix = "%s_%s" % (TAG, name)
        self.json = os.path.join(tmp, name + ".json")
        self.path = path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(topo)
        self.logpath = os.path.join(tmp, name + ".log")
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen([pipefwd, "-q", "-d", "400", "-j", self.json, path, "--",
                                      "--file-prefix=" + self.prefix],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **(env or {})})
        end = time.monotonic() + 60
        while time.monotonic() < end and self.ctl("totals").returncode != 0:
            time.sleep(0.2)
        cfg = json.loads(self.ctl("--json", "config").stdout or "{}")
        self.sock = os.path.join(cfg.get("runtime_dir", ""), "dpdk_telemetry.v2")

    def ctl(self, *args):
        return subprocess.run([CTL, "--file-prefix", self.prefix] + list(args),
                              capture_output=True, text=True, timeout=120)

    def tel(self, cmd):
        return telemetry(self.sock, cmd)

    def finish(self):
        self.proc.send_signal(signal.SIGINT)
        rc = self.proc.wait(timeout=120)
        self.log.close()
        check(rc == 0, "pipefwd exited %d" % rc)
        st = json.load(open(self.json))
        check(st["totals"]["unaccounted"] == 0, "unaccounted: %s" % st["totals"])
        check(st["mbufs_in_use_after_stop"] == 0, "mbufs leaked: %s" %
              st["mbufs_in_use_after_stop"])
        return st


def trace(run, *args):
    r = run.ctl("--json", "trace", *args)
    if not check(r.returncode == 0, "trace %s: rc %d %s" % (args, r.returncode, r.stderr)):
        return {"paths": []}
    return json.loads(r.stdout)


def ip4(p):
    return "%s > %s" % (p[IP].src, p[IP].dst)


def test_trace_rx(run):
    model = frames()
    t = trace(run, "7", "--stage", "rx")
    check(t.get("state") == "done" and t.get("traced") == 7 and t.get("done") == 7,
          "trace 7 at rx: %s" % {k: v for k, v in t.items() if k != "paths"})
    seen = set()
    for steps in t["paths"]:
        first = steps[0] if steps else {}
        match = [k for k, (p, _) in enumerate(model) if first.get("ip4") == ip4(p) and
                 first.get("ttl") == p[IP].ttl]
        if not check(len(match) == 1, "traced packet not one of the input frames: %s" % first):
            continue
        k = match[0]
        seen.add(k)
        p, want = model[k]
        what = "frame %d (%s)" % (k, ip4(p))
        check([s["stage"] for s in steps] == want["path"], "%s: path %s, want %s" % (
            what, [s["stage"] for s in steps], want["path"]))
        check([s["edge"] for s in steps] == want["edges"], "%s: edges %s, want %s" % (
            what, [s["edge"] for s in steps], want["edges"]))
        drops = [s["drop"] for s in steps if "drop" in s]
        check(drops == ([want["drop"]] if want["drop"] else []), "%s: drops %s, want %s" % (
            what, drops, want["drop"]))
        # The fields rx looked at, as scapy reads them from the frame.
        check(first.get("eth") == "%s > %s" % (p[Ether].src, p[Ether].dst) and
              first.get("in_port") == "p0" and first.get("len") == len(raw(p)) and
              first.get("ip4_checksum") == "0x%04x" % p[IP].chksum,
              "%s: rx fields %s" % (what, first))
        l4 = TCP if TCP in p else UDP
        check(first.get(l4.__name__.lower()) == "%d > %d" % (p[l4].sport, p[l4].dport),
              "%s: ports %s" % (what, first))
        check(all(s["cycles"] > 0 and s["lcore"] == 1 for s in steps),
              "%s: cycles/lcore %s" % (what, steps))
        by = {s["stage"]: s for s in steps}
        if "acl" in by:
            acl = by["acl"]
            if want["drop"] == "acl:acl_deny":
                check("acl_deny=1" in acl["counters"] and acl.get("note", "").startswith(
                    "rule 1: deny") and "dport 23" in acl["note"], "%s: acl %s" % (what, acl))
            else:
                check(acl["counters"] == "default_permit=1" and
                      acl.get("note") == "no rule matched: default permit",
                      "%s: acl %s" % (what, acl))
        if "lpm" in by:
            lpm = by["lpm"]
            check(lpm.get("note") == "lookup: 10.1.0.0/16 via lab_gw (%s) port p1" % GW,
                  "%s: lpm lookup %s" % (what, lpm.get("note")))
            if want["drop"] is None:
                fwd = want["out"]
                check(lpm.get("out_port") == "p1" and lpm.get("rewrite") ==
                      "eth %s > %s, ttl %d" % (R1, GW, fwd[IP].ttl), "%s: lpm %s" % (what, lpm))
                tx = by["tx"]
                check(tx.get("out_port") == "p1" and tx.get("eth") == "%s > %s" % (R1, GW) and
                      tx.get("ip4") == ip4(fwd) and tx.get("ttl") == fwd[IP].ttl and
                      tx.get("ip4_checksum") == "0x%04x" % fwd[IP].chksum,
                      "%s: leaves as %s, want %s ttl %d checksum 0x%04x" % (
                          what, tx, ip4(fwd), fwd[IP].ttl, fwd[IP].chksum))
            else:
                check("ip4_ttl_expired=1" in lpm["counters"], "%s: lpm %s" % (what, lpm))
    check(seen == set(range(len(model))), "7 traced packets are not the 7 frames once each: %s"
          % sorted(seen))
    out = run.ctl("trace", "--show").stdout
    check(out.startswith("trace ") and "Packet 7" in out and "drop acl:acl_deny" in out and
          "lookup: 10.1.0.0/16 via lab_gw" in out, "trace --show text: %r" % out[:400])


def test_trace_l2(run):
    t = trace(run, "3", "--stage", "l2")
    check(t.get("state") == "done" and t.get("traced") == 3, "trace 3 at l2: %s" % t)
    for steps in t["paths"]:
        # l2 (lcore 2) hands over to tx (lcore 1) through a ring, which both
        # replaying sources can fill: then the trace shows the runtime's drop.
        lost = [s.get("drop") for s in steps[1:]] == ["l2:ring_full"]
        check([s["stage"] for s in steps] == (["l2", "l2"] if lost else ["l2", "tx"]) and
              [s["edge"] for s in steps] == ["out", "drop" if lost else "tx"],
              "l2 path %s" % steps)
        l2 = steps[0] if steps else {}
        src = l2.get("eth", "").split(" > ")[0]
        check(src in L2_MACS and l2.get("eth", "").endswith("> ff:ff:ff:ff:ff:ff") and
              l2.get("out_port") == "flood" and l2.get("flood") == "p3" and l2.get("bd") == 0 and
              l2.get("lcore") == 2 and "flooded=1" in l2.get("counters", ""),
              "l2 step %s" % l2)
        if len(steps) == 2 and not lost:
            check(steps[1]["lcore"] == 1 and steps[1].get("flood") == "p3",
                  "tx step after the ring %s" % steps[1])
    t = trace(run, "6")
    check(t.get("traced") == 6 and all(p and p[0]["stage"] in ("rx", "rx_l2")
                                       for p in t["paths"]),
          "trace 6 at every source: %s" % [[s["stage"] for s in p] for p in t["paths"]])
    # The largest trace: the status reply stays within the 16 KiB telemetry limit.
    t = trace(run, "256")
    check(t.get("traced") == 256 and len(t["paths"]) == 256 and
          all(p for p in t["paths"]) and 0 < len(t.get("packets", [])) <= 256,
          "trace 256: %s" % {k: v for k, v in t.items() if k not in ("paths", "packets")})
    r = run.ctl("trace", "3", "--stage", "nosuch")
    check(r.returncode == 1 and "unknown stage" in r.stderr and "Traceback" not in r.stderr,
          "trace at an unknown stage: %r" % r.stderr)
    r = run.ctl("trace", "0")
    check(r.returncode == 1 and "1..256" in r.stderr, "trace 0: %r" % r.stderr)
    check(run.ctl("trace", "--clear").returncode == 0, "trace --clear")
    check(run.tel("/pipefwd/trace_show").get("state") == "idle", "state after clear")


def test_trace(tmp):
    write_pcap(os.path.join(tmp, "p0.pcap"), [raw(p) for p, _ in frames()])
    write_pcap(os.path.join(tmp, "p2.pcap"), [raw(p) for p in l2_frames()])
    run = Run(tmp, "trace", PIPEFWD, TOPO.format(tmp=tmp, r0=R0, r1=R1, gw=GW))
    try:
        test_trace_rx(run)
        test_trace_l2(run)
    finally:
        st = run.finish()
    # Traced packets were forwarded and dropped as untraced: each bad frame is
    # 1/7 of p0's input and the 4 good ones leave on p1 (within one loop).
    rx = {s: st["stages"][s]["drops"] for s in ("rx", "acl", "lpm")}
    n = rx["rx"].get("ip4_bad_checksum", 0)
    check(n > 0 and abs(rx["acl"].get("acl_deny", 0) - n) <= 1 and
          abs(rx["lpm"].get("ip4_ttl_expired", 0) - n) <= 1, "drop counters %s" % rx)


def test_hwm(tmp, late=False):
    """A ring cleared while full holds its mark while a slow consumer drains
    it. @late: the producer does not answer the clear's restart (the
    PIPEFWD_FAULT_HWM_LATE hook, as an lcore not scheduled for 100 ms on a
    loaded machine): the mark since the clear is then what the ring held as
    the clear replied, still exact, since nothing was enqueued after it."""
    write_pcap(os.path.join(tmp, "hwm.pcap"), [numbered_udp(i) for i in range(1100)])
    run = Run(tmp, "hwm_late" if late else "hwm", PIPEFWD_TEST,
              HWM_TOPO.format(tmp=tmp, us=1000000),
              env={"PIPEFWD_FAULT_HWM_LATE": "1"} if late else None)
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and run.tel("/pipefwd/totals")["rx"] < 1100:
            time.sleep(0.1)
        ring = "xc_to_slow"
        before = run.tel("/pipefwd/rings," + ring)[ring]
        check(before["hwm"] == 1023 and before["hwm_exact"] == 1, "ring filled: %s" % before)
        check(run.tel("/pipefwd/clear,xc->slow").get("cleared") == 1, "clear the ring")
        r1 = run.tel("/pipefwd/rings," + ring)[ring]
        time.sleep(2.5)
        r2 = run.tel("/pipefwd/rings," + ring)[ring]
        print("hwm: before clear %s/%s, after %s/%s (exact %s), 2.5 s later %s/%s (exact %s)" % (
            before["used"], before["hwm"], r1["used"], r1["hwm"], r1["hwm_exact"], r2["used"],
            r2["hwm"], r2["hwm_exact"]))
        if check(r1["used"] >= 64, "ring drained before the clear (machine too slow?): %s" % r1):
            check(r1["hwm_exact"] == 1 and r1["used"] <= r1["hwm"] <= before["used"],
                  "hwm right after the clear: %s" % r1)
            check(r2["used"] < r1["used"], "consumer took no burst in 2.5 s: %s" % r2)
            check(r2["hwm_exact"] == 1 and r2["hwm"] == r1["hwm"] and r2["hwm"] > r2["used"],
                  "hwm since the clear must hold while the ring drains: %s then %s" % (r1, r2))
            check(r2["enqueued"] == 0, "nothing enqueued since the clear: %s" % r2)
        # The stall ends (a live reload of the delay), so the exit need not wait.
        with open(run.path, "w") as f:
            f.write(HWM_TOPO.format(tmp=tmp, us=0))
        run.proc.send_signal(signal.SIGHUP)
        end = time.monotonic() + 30
        while time.monotonic() < end and " applied in " not in open(run.logpath).read():
            time.sleep(0.2)
    finally:
        st = run.finish()
    check(st["rings"]["xc->slow"]["hwm"] == 1023, "exit report hwm since start: %s" %
          st["rings"]["xc->slow"])


def main():
    tmp = tempfile.mkdtemp(prefix="pf_trace_")
    try:
        test_trace(tmp)
        test_hwm(tmp)
        test_hwm(tmp, late=True)
    except Exception as e:  # report, and keep the files for a look
        traceback.print_exc()
        FAILS.append("exception: %r" % e)
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
