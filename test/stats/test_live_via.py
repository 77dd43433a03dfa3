#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live routes through a next hop given by address (pipefwd-ctl route-add STAGE PREFIX
[via] ADDRESS), resolved by the neigh stage, against a running pipefwd.

b0 replays forever UDP to 10.90.0.1 (no route at first) and to 10.60.0.1 (via n1,
out b1). b3 (172.19.0.1/24) replays forever the ARP reply of host H = 172.19.0.2:
it teaches nothing until lpm needs H, then resolves it. Checked:
 - before: 10.90 flows are ip4_no_route, nothing leaves b3;
 - route-add lpm 10.90.0.0/16 via 172.19.0.2: the route lookup names 172.19.0.2,
   ip4_no_route stops, b3 transmits; a capture of b3's tx holds exactly what a
   scapy model of the router makes of the input (dst H, src b3, TTL - 1,
   checksum) and at most ARP requests for H from b3's address;
 - route-del: back to ip4_no_route, b3 quiet;
 - refusals: a stage without a neigh edge, an address on no port's subnet or that
   subnet's broadcast or network address;
 - changes --save writes a kept route inline ({ prefix, via: ADDRESS }), not into
   the route file, an lpm6 route as a new inline list (quoted prefix), and the
   saved file passes --check and runs;
 - exit 0, nothing unaccounted.

usage: test_live_via.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from scapy.all import ARP, IP, UDP, Ether, Raw, raw, rdpcap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import Ctl, finish, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "clivevia_%d" % os.getpid()
FAILS = []
B0, B3, H = "02:00:00:00:00:10", "02:00:00:00:00:13", "02:00:00:00:0b:03"

# Memory: a save reloads lpm and lpm6 at once, each with a new table beside the old one
# (64 MiB of tbl24 each), beside lpm2's.
TOPO = """\
eal: [--no-huge, -m, "1024", --no-pci]
ports:
  b0: {{ device: "net_pcap0,rx_pcap={tmp}/l3.pcap,infinite_rx=1", mac: "{b0}",
        ipv4: 192.168.0.1/24 }}
  b1: {{ device: "net_null0", mac: "02:00:00:00:00:11", ipv4: 172.17.0.1/24 }}
  b3: {{ device: "net_pcap1,rx_pcap={tmp}/arp.pcap,infinite_rx=1", mac: "{b3}",
        ipv4: 172.19.0.1/24, ipv6: "2001:db8:3::1/64" }}
  c0: {{ device: "net_pcap2,rx_pcap={tmp}/c.pcap" }}
  c1: {{ device: "net_null1", mac: "02:00:00:00:00:21" }}
stages:
  rx: {{ type: rx, ports: [b0, b3], next: {{ ipv4: lpm, arp: nb, ipv6: lpm6 }} }}
  lpm:
    type: lpm
    nexthops:
      n1: {{ port: b1, mac: "02:00:00:00:01:01" }}
    routes_file: routes.txt
    next: {{ out: tx, neigh: nb }}
  nb: {{ type: neigh, next: tx }}
  lpm6:
    type: lpm6
    nexthops:
      m6: {{ port: b3, mac: "{h}" }}
    next: tx
  tx: {{ type: tx, ports: [b0, b1, b3] }}
  rx2: {{ type: rx, ports: [c0], next: {{ ipv4: lpm2 }} }}
  lpm2:
    type: lpm
    nexthops:
      m1: {{ port: c1, mac: "02:00:00:00:02:01" }}
    next: tx2
  tx2: {{ type: tx, ports: [c0, c1] }}
lcores:
  1: [rx, lpm, nb, lpm6, tx, rx2, lpm2, tx2]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


ctl = Ctl(CTL, PREFIX, check)
ctl_json = ctl.json
refused = ctl.refused


def rates(secs=1.0):
    """b3's tx and lpm's ip4_no_route increases over @secs, after a settling pause."""
    def sample():
        return (ctl_json("ports").get("b3", {}).get("tx", 0),
                ctl_json("stages").get("lpm", {}).get("drops", {}).get("ip4_no_route", 0))
    time.sleep(0.3)
    a = sample()
    time.sleep(secs)
    b = sample()
    return {"b3": b[0] - a[0], "no_route": b[1] - a[1]}


def inputs():
    """The replayed frames, and the model: what the router sends out b3 for each."""
    l3, model = [], set()
    for k in range(32):
        for dst in ("10.90.0.1", "10.60.0.1"):
            p = Ether(src="02:00:00:00:09:09", dst=B0) / \
                IP(src="192.168.0.7", dst=dst, id=k, ttl=64) / UDP(sport=7, dport=9) / \
                Raw(bytes(18))
            l3.append(raw(p))
            if dst.startswith("10.90"):
                q = Ether(raw(p))
                q[Ether].dst, q[Ether].src = H, B3
                q[IP].ttl -= 1
                del q[IP].chksum
                model.add(raw(Ether(raw(q))))
    reply = Ether(src=H, dst=B3) / ARP(op=2, hwsrc=H, psrc="172.19.0.2", hwdst=B3,
                                       pdst="172.19.0.1")
    c = Ether(src="02:00:00:00:09:0c", dst="02:00:00:00:00:20") / \
        IP(src="10.0.0.1", dst="10.1.0.1") / UDP(sport=1, dport=2)
    return l3, [raw(reply)], [raw(c)], model


def arp_probe_ok(p):
    """An ARP request for H from b3's address (broadcast or unicast to H)."""
    return (ARP in p and p[ARP].op == 1 and p[Ether].src == B3 and p[Ether].dst in (
        "ff:ff:ff:ff:ff:ff", H) and p[ARP].hwsrc == B3 and p[ARP].psrc == "172.19.0.1" and
        p[ARP].pdst == "172.19.0.2")


def run(tmp, model):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        r = ctl("--json", "totals", ok=False)
        if r.returncode == 0 and json.loads(r.stdout).get("rx", 0) > 1000:
            break
        time.sleep(0.2)
    r = rates()
    check(r["no_route"] > 0 and r["b3"] == 0, "before route-add: %s" % r)
    refused(("route-add", "lpm2", "10.90.0.0/16", "via", "172.19.0.2"), "has no neigh edge")
    refused(("route-add", "lpm", "10.90.0.0/16", "10.5.0.9"), "on no port's subnet")
    # issue 32 item 9: a subnet's broadcast (or network) address is no host
    refused(("route-add", "lpm", "10.90.0.0/16", "via", "172.19.0.255"),
            "broadcast address of port b3's subnet")
    refused(("route-add", "lpm", "10.90.0.0/16", "172.19.0.0"), "network address of port b3")
    refused(("route-add", "lpm", "10.90.0.0/16", "via", "n1", "x"), "expected")

    out = ctl("route-add", "lpm", "10.90.0.0/16", "via", "172.19.0.2").stdout
    check("10.90.0.0/16 172.19.0.2" in out, "route-add output: %r" % out)
    print(out, end="")
    j = ctl_json("route", "lpm", "10.90.0.1")
    check(j.get("prefix") == "10.90.0.0/16" and j.get("nexthop") == "172.19.0.2" and
          j.get("port") == "b3" and j.get("result") == "neighbor", "lookup after route-add: %s" % j)
    out = ctl("route", "lpm", "10.90.0.1").stdout
    check(out == "10.90.0.1 via 10.90.0.0/16: neighbor 172.19.0.2 port b3\n", "route: %r" % out)
    cap = ctl("capture", "b3:tx", "-c", "24", "-w", "b3.pcapng", "--wait", "30")
    pkts = rdpcap(os.path.join(tmp, "b3.pcapng")) if cap.returncode == 0 else []
    udp = [raw(p) for p in pkts if UDP in p]
    check(len(udp) >= 8, "b3 capture: %d routed frames of %d" % (len(udp), len(pkts)))
    for p in pkts:
        check(raw(p) in model or arp_probe_ok(p), "b3 sent a frame the model does not "
              "make: %s" % p.summary())
    r = rates()
    check(r["no_route"] == 0 and r["b3"] > 0, "after route-add: %s" % r)
    nb = ctl("neighbors", "nb").stdout
    check("172.19.0.2" in nb and H in nb, "neighbors: %r" % nb)

    ctl("route-del", "lpm", "10.90.0.0/16")
    r = rates()
    check(r["no_route"] > 0 and r["b3"] == 0, "after route-del: %s" % r)
    check(ctl_json("changes")["head"]["unsaved"] == 0, "add then del left a change")

    # a kept route by address is saved inline, the route file untouched
    ctl("route-add", "lpm", "10.91.0.0/16", "172.19.0.2")
    ctl("route-add", "lpm", "10.92.0.0/16", "n1")
    ctl("route-add", "lpm6", "2001:DB8:77::/48", "m6")      # lpm6, no route file: inline
    refused(("route-add", "lpm6", "2001:db8:77::/48", "m6"), "exists (via m6)")
    out = ctl("changes", "--save").stdout
    topo = os.path.join(tmp, "topo.yaml")
    saved = open(topo).read()
    check("{ prefix: 10.91.0.0/16, via: 172.19.0.2 }" in saved and
          '      m6: { port: b3, mac: "%s" }\n    routes:\n      - { prefix: "2001:db8:77::/48", '
          'via: "m6" }\n    next: tx\n' % H in saved,
          "saved topology:\n%s" % saved)
    check(open(os.path.join(tmp, "routes.txt")).read() == "# routes\n10.60.0.0/16 n1\n10.92.0.0/16 n1\n",
          "routes file: %r" % open(os.path.join(tmp, "routes.txt")).read())
    check("applied" in out, "reload after save: %r" % out)
    c = subprocess.run([PIPEFWD, "--check", topo], capture_output=True, text=True)
    check(c.returncode == 0, "--check of the saved file: %s %s" % (c.stdout, c.stderr))
    j = ctl_json("route", "lpm", "10.91.0.1")
    check(j.get("prefix") == "10.91.0.0/16" and j.get("nexthop") == "172.19.0.2",
          "lookup after save and reload: %s" % j)


def main():
    tmp = tempfile.mkdtemp(prefix="pf_livevia_")
    l3, arp, c, model = inputs()
    write_pcap(os.path.join(tmp, "l3.pcap"), l3)
    write_pcap(os.path.join(tmp, "arp.pcap"), arp)
    write_pcap(os.path.join(tmp, "c.pcap"), c)
    with open(os.path.join(tmp, "routes.txt"), "w") as f:
        f.write("# routes\n10.60.0.0/16 n1\n")
    topo = os.path.join(tmp, "topo.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp, b0=B0, b3=B3, h=H))
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    stats = os.path.join(tmp, "stats.json")
    proc = subprocess.Popen([PIPEFWD, "-q", "-d", "400", "-j", stats, "--capture-dir", tmp, topo,
                             "--", "--file-prefix=" + PREFIX], stdout=log, stderr=subprocess.STDOUT)
    try:
        run(tmp, model)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.close()
    check(rc == 0, "pipefwd exited %d: %s" % (rc, open(os.path.join(tmp, "pipefwd.log")).read()[-1500:]))
    if rc == 0:
        st = json.load(open(stats))
        check(st["totals"]["unaccounted"] == 0 and st["mbufs_in_use_after_stop"] == 0,
              "accounting at exit: %s" % st["totals"])
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
