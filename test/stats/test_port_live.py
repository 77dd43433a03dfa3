#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ports added and removed live (issue 33 item 2), while the other ports forward.

A router (one lcore: the machine is shared; packets are in flight in tx's
buffers) forwards a0 (net_pcap, looping 64 frames to 10.9/16) out a1
(net_pcap tx_pcap) all along. Meanwhile:
 - pipefwd-ctl port-add c0 (looping 32 frames to 10.9/16, rx=rx): its frames
   go out a1 too; port-del c0 under traffic.
 - the file gains b0 (looping 48 frames to 10.8/16), b1 (tx_pcap), a next
   hop on b1 and a route 10.8/16 via it; `reload` adds them; b0's frames go
   out b1; the file as it was and `reload` again remove both under traffic:
   what was routed to b1 before must still leave by it (drained first).
 - refusals change nothing: a name in use, a device that fails to probe (by
   port-add and by reload), a port a next hop still uses (file:line:col), a
   stage of the wrong type, an unknown option.
Every output frame must be scapy's model of an input frame, in the order the
input loops them (TTL - 1, the next hop's MAC, the port's MAC, the checksum
scapy computes): a1 holds exactly a0's frames and c0's, b1 exactly b0's; at
exit rx = a0 + b0 + c0 = tx (retired ports kept in the totals), nothing
dropped, and the report lists only the ports that remain.

usage: test_port_live.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))
from pftest import Ctl, dpdk_rundir, stop_pipefwd, telemetry, write_atomic  # noqa: E402
from pcaplib import read_pcap  # noqa: E402

from scapy.all import IP, UDP, Ether, wrpcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "cportlive_%d" % os.getpid()
FAILS = []

MAC = {"a0": "02:00:00:00:00:10", "a1": "02:00:00:00:00:11", "b0": "02:00:00:00:00:20",
       "b1": "02:00:00:00:00:21", "c0": "02:00:00:00:00:30"}
H1, H2 = "02:00:00:00:01:01", "02:00:00:00:02:02"

BASE = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  a0: {{ device: "net_pcap0,rx_pcap={tmp}/a.pcap,infinite_rx=1", mac: "{a0}", ipv4: 10.0.0.1/24 }}
  a1: {{ device: "net_pcap1,tx_pcap={tmp}/a1.pcap", mac: "{a1}", ipv4: 10.1.0.1/24 }}
{extra_ports}stages:
  rx: {{ type: rx, ports: [a0{rx_extra}], pace_pps: 3000, next: {{ ipv4: lpm }} }}
  lpm:
    type: lpm
    nexthops:
      h1: {{ port: a1, mac: "{h1}" }}
{extra_nh}    routes:
      - {{ prefix: 10.9.0.0/16, via: h1 }}
{extra_route}    next: tx
  tx: {{ type: tx, ports: [a1{tx_extra}] }}
runtime: {{ mbufs: 16384, backpressure: true }}
lcores:
  1: [rx, lpm, tx]
"""


def topo(tmp, b=False, bad_probe=False):
    extra = ""
    if b:
        extra += ('  b0: {{ device: "net_pcap2,rx_pcap={tmp}/b.pcap,infinite_rx=1", mac: "{b0}", '
                  'ipv4: 10.2.0.1/24 }}\n  b1: {{ device: "net_pcap3,tx_pcap={tmp}/b1.pcap", '
                  'mac: "{b1}", ipv4: 10.3.0.1/24 }}\n').format(tmp=tmp, **MAC)
    if bad_probe:
        extra += '  z0: { device: "net_pcap9,iface=pfnoexist%d" }\n' % os.getpid()
    return BASE.format(tmp=tmp, h1=H1, extra_ports=extra, rx_extra=", b0" if b else "",
                       tx_extra=", b1" if b else "",
                       extra_nh='      h2: {{ port: b1, mac: "{}" }}\n'.format(H2) if b else "",
                       extra_route="      - { prefix: 10.8.0.0/16, via: h2 }\n" if b else "",
                       **MAC)


T0 = time.monotonic()


def mark(what):
    print("%6.2f s  %s" % (time.monotonic() - T0, what), flush=True)


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def frames(src_mac, in_mac, src, net, n):
    """@n distinct UDP frames from @src to @net.x, as received on a port of MAC @in_mac."""
    return [Ether(src=src_mac, dst=in_mac) /
            IP(src=src, dst="%s.%d" % (net, i % 200 + 1), ttl=64, id=i) /
            UDP(sport=1000 + i, dport=2000) / bytes(18) for i in range(n)]


def routed(pkts, out_mac, nh_mac):
    """scapy's model of @pkts routed: the port's and next hop's MACs, TTL - 1."""
    out = []
    for p in pkts:
        q = p.copy()
        q[Ether].src, q[Ether].dst = out_mac, nh_mac
        q[IP].ttl -= 1
        del q[IP].chksum
        out.append(bytes(q.__class__(bytes(q))))
    return out


ctl = Ctl(CTL, PREFIX, check)


def tel(cmd):
    """A telemetry command, straight (the checks; pipefwd-ctl is for the changes)."""
    try:
        return telemetry(os.path.join(dpdk_rundir(PREFIX), "dpdk_telemetry.v2"), cmd, 20)
    except (OSError, ValueError):
        return None


def ports(quiet=False):
    """Each port's counters ({} while the socket is not up, with @quiet)."""
    r = tel("/pipefwd/ports")
    check(quiet or r is not None, "no answer to /pipefwd/ports")
    return r or {}


def unsaved():
    return (tel("/pipefwd/changes") or {}).get("unsaved")


def wait_for(cond, what, secs=10.0):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return check(False, "timed out waiting for " + what)


def same_ports(before, what):
    """Refused: the ports are those of before (names, devices), nothing else changed."""
    cfg = tel("/pipefwd/config") or {}
    check(sorted(cfg.get("ports", {})) == before, "%s: ports now %s, were %s" % (
        what, sorted(cfg.get("ports", {})), before))


def main():
    tmp = tempfile.mkdtemp(prefix="pf_portlive_")
    a_in = frames("02:00:00:00:aa:01", MAC["a0"], "10.0.0.2", "10.9.0", 64)
    b_in = frames("02:00:00:00:bb:01", MAC["b0"], "10.2.0.2", "10.8.0", 48)
    c_in = frames("02:00:00:00:cc:01", MAC["c0"], "10.5.0.2", "10.9.1", 32)
    wrpcap(os.path.join(tmp, "a.pcap"), a_in)
    wrpcap(os.path.join(tmp, "b.pcap"), b_in)
    wrpcap(os.path.join(tmp, "c.pcap"), c_in)
    path = os.path.join(tmp, "live.yaml")
    write_atomic(path, topo(tmp))
    stats = os.path.join(tmp, "stats.json")
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-j", stats, path, "--", "--file-prefix=" + PREFIX],
                            stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    try:
        run(tmp, path)
    finally:
        rc = stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
    out = open(os.path.join(tmp, "pipefwd.log")).read()
    check(rc == 0, "pipefwd exit %d:\n%s" % (rc, out[-2000:]))
    mark("stopped")
    if not FAILS:
        outputs(tmp, stats, a_in, b_in, c_in)
    mark("outputs checked")
    if FAILS:
        print(out[-3000:])
        print("kept", tmp)
        sys.exit(1)
    subprocess.run(["rm", "-rf", tmp])
    print("ok")


def run(tmp, path):
    if not wait_for(lambda: ports(quiet=True).get("a1", {}).get("tx", 0) > 100, "a0 -> a1", 30):
        return
    mark("forwarding")
    names = sorted(tel("/pipefwd/config").get("ports", {}))
    check(names == ["a0", "a1"], "ports at start: %s" % names)

    # ---- refused, nothing changed
    ctl.refused(("port-add", "a1", "net_null0", "rx=rx"), "in use")
    ctl.refused(("port-add", "z0", "net_pcap9,iface=pfnoexist%d" % os.getpid(), "rx=rx"),
                "ports.z0: cannot create device")
    ctl.refused(("port-add", "z0", "net_null7", "rx=lpm"), "stage lpm is not of type rx")
    ctl.refused(("port-add", "z0", "net_null7", "speed=9"), "unknown option 'speed'")
    # a1 is h1's port: line 10, column 19 of the file
    ctl.refused(("port-del", "a1"), "live.yaml:10:19: error: stages.lpm.nexthops.h1.port")
    same_ports(names, "refusals")
    check(unsaved() == 0, "a refusal left a change")

    mark("refusals")
    # ---- port-add c0 (polled by rx): its frames are routed out a1; port-del under traffic
    r = ctl("port-add", "c0", "net_pcap4,rx_pcap=%s/c.pcap,infinite_rx=1" % tmp, "rx=rx",
            "mac=" + MAC["c0"], "ipv4=10.5.0.1/24")
    check("port c0 added" in r.stdout, "port-add c0: %r" % r.stdout)
    wait_for(lambda: ports().get("c0", {}).get("rx", 0) > 200, "c0 forwarding")
    j = tel("/pipefwd/changes") or {}
    check(list(zip(j.get("op", []), j.get("table", []), j.get("key", []))) ==
          [("add", "ports", "c0")], "changes after port-add: %s" % j)
    r = ctl("port-del", "c0")
    check("port c0 removed" in r.stdout, "port-del c0: %r" % r.stdout)
    check("c0" not in ports(), "c0 still listed")
    check(unsaved() == 0, "port-add then port-del left a change")

    mark("port-add, port-del")
    # ---- the file: b0 and b1 with a route via b1, added by reload
    time.sleep(1.1)    # a file rewritten in the second it was loaded looks unchanged
    write_atomic(path, topo(tmp, b=True, bad_probe=True))
    r = ctl("reload", ok=False)
    check(r.returncode == 1 and "cannot create device" in r.stdout + r.stderr,
          "reload with a port that fails to probe: %d %r %r" % (r.returncode, r.stdout,
                                                                  r.stderr))
    same_ports(names, "reload refused")
    write_atomic(path, topo(tmp, b=True))
    r = ctl("reload")
    check("2 ports added, 0 removed" in r.stdout, "reload adding b0, b1: %r" % r.stdout)
    wait_for(lambda: ports().get("b1", {}).get("tx", 0) > 200, "b0 -> b1")
    check(sorted((tel("/pipefwd/config") or {}).get("ports", {})) == ["a0", "a1", "b0", "b1"],
          "ports after the add")
    mark("reload: added")
    # ---- the file as it was: both removed under traffic, b1 drained first
    write_atomic(path, topo(tmp))
    r = ctl("reload")
    check("0 ports added, 2 removed" in r.stdout, "reload removing b0, b1: %r" % r.stdout)
    check(sorted(ports()) == ["a0", "a1"], "ports after the removal: %s" % sorted(ports()))
    # Live, the totals are read microseconds apart while a pass holds a burst
    # between rx and tx (docs/stats.md: exact once traffic stops, checked in
    # the exit report below); cc23 read unaccounted 1 here. Nothing dropped.
    t = tel("/pipefwd/totals") or {}
    check(t.get("dropped") == 0 and abs(t.get("unaccounted", 1 << 30)) <= 64,
          "totals: %s" % t)
    before = ports()["a1"]["tx"]
    wait_for(lambda: ports()["a1"]["tx"] > before + 100, "a0 -> a1 after the changes")
    mark("reload: removed")


def outputs(tmp, stats, a_in, b_in, c_in):
    """The frames each port sent against scapy's model, and the exit report."""
    rep = json.load(open(stats))
    tot = rep["totals"]
    check(sorted(rep["ports"]) == ["a0", "a1"], "ports in the report: %s" % sorted(rep["ports"]))
    a_out = routed(a_in, MAC["a1"], H1)
    c_out = routed(c_in, MAC["a1"], H1)
    b_out = routed(b_in, MAC["b1"], H2)
    got_a1 = read_pcap(os.path.join(tmp, "a1.pcap"), strict=True)
    got_b1 = read_pcap(os.path.join(tmp, "b1.pcap"), strict=True)
    # a1: a0's frames and c0's interleaved, each stream in its own order
    a_seen = [f for f in got_a1 if f[26:30] == bytes([10, 0, 0, 2])]
    c_seen = [f for f in got_a1 if f[26:30] == bytes([10, 5, 0, 2])]
    check(len(a_seen) + len(c_seen) == len(got_a1), "a1 sent %d frames of neither stream" %
          (len(got_a1) - len(a_seen) - len(c_seen)))
    check(len(c_seen) > 200, "c0's frames on a1: %d" % len(c_seen))
    for name, seen, want in (("a1 (a0's)", a_seen, a_out), ("a1 (c0's)", c_seen, c_out),
                             ("b1", got_b1, b_out)):
        bad = [k for k, f in enumerate(seen) if f != want[k % len(want)]]
        check(not bad, "%s: %d of %d frames differ from the model, first #%s" % (
            name, len(bad), len(seen), bad[:1]))
    check(len(got_b1) > 200, "b1 sent %d frames" % len(got_b1))
    check(rep["ports"]["a0"]["rx"] == len(a_seen) and rep["ports"]["a1"]["tx"] == len(got_a1),
          "a0 rx %d, a1 tx %d, a1's pcap %d (%d of a0)" % (
              rep["ports"]["a0"]["rx"], rep["ports"]["a1"]["tx"], len(got_a1), len(a_seen)))
    # every frame read was sent: the retired ports' counts stay in the totals
    n = len(a_seen) + len(c_seen) + len(got_b1)
    check(tot["rx"] == n and tot["tx"] == n and tot["dropped"] == 0 and
          tot["unaccounted"] == 0, "totals %s, frames sent %d" % (tot, n))
    check(rep["reload"]["generation"] == 2 and rep["reload"]["failures"] == 1,
          "reloads: %s (want 2 applied, 1 refused)" % rep["reload"])


if __name__ == "__main__":
    main()
