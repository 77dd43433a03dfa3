#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Host interfaces (the host stage): a routing daemon's view of the router.

    /usr/bin/python3 test/netns/host_iface.py --pipefwd build/app/pipefwd

pipefwd runs in a namespace of its own (PFX+"w"), its port p0 a net_tap
bridged there to a veth whose other end is the peer host (namespace PFX+"p");
the router's host namespace (PFX+"r") is where a daemon would run. pipefwd
makes the TAP "p0" in the host namespace. Checks, each bounded in time:
  - the TAP has the port's MAC, MTU and addresses (IPv4, IPv6) and carrier;
  - its carrier follows the port's link: the peer's veth down -> NO-CARRIER,
    up -> carrier again;
  - the host namespace pings the peer over IPv4, IPv6 and link-local (the
    kernel's ARP/NS and echo requests injected, the answers punted to it),
    and a ping with TTL 1 still reaches the peer (injected frames are sent
    unchanged, never routed: GTSM works);
  - the peer's pings to the router are answered by pipefwd itself (lpm's
    icmp_echo_reply moves, the host stage delivers nothing for them);
  - 4 MB of TCP each way between the namespaces, sha256 compared (a BGP
    session's path);
  - a UDP flood from the peer to the router over the udp rate: the excess
    is dropped as host_ratelimited_udp, the rest delivered;
  - pipefwd exits 0 with the accounting line exact.
Namespaces and the veth are deleted at the end; traffic never leaves them.
Needs root, ip, ping, ethtool: skipped (exit 77) without.
"""
import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

PFX = os.environ.get("PF_NETNS_PREFIX", "pfh%04x" % (os.getpid() & 0xffff))
NS_PEER, NS_HOST, NS_WIRE = PFX + "p", PFX + "r", PFX + "w"
VETH, VETH_PEER, TAP, BR = PFX + "v0", PFX + "v1", PFX + "t0", PFX + "br"
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-host")
PORT_MAC = "02:00:00:00:00:10"
PEER_MAC = "02:00:00:0a:00:02"
UDP_RATE = 200

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_tap0,iface={tap}", mac: "{mac}", ipv4: 10.1.0.1/24,
        ipv6: "2001:db8:1::1/64", mtu: 1400 }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: lpm, arp: neigh, ipv6: lpm6 }} }}
  lpm: {{ type: lpm, next: {{ out: tx, neigh: neigh, host: host }} }}
  lpm6: {{ type: lpm6, next: {{ out: tx, neigh: neigh, host: host }} }}
  neigh: {{ type: neigh, next: {{ out: tx, host: host }} }}
  host: {{ type: host, namespace: {ns}, rate: {{ udp: {udp}, burst: 50 }}, next: tx }}
  tx: {{ type: tx, ports: [p0] }}
lcores:
  1: [rx, lpm, lpm6, neigh, host, tx]
"""

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def sh(*cmd, ns=None, ok=True, timeout=20):
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if ok and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(full), r.stderr.strip()))
    return r


def wait_for(pred, seconds, step=0.2):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def link(ns):
    return json.loads(sh("ip", "-j", "addr", "show", "dev", "p0", ns=ns).stdout)[0]


def ctl(pipefwd_ctl, *args):
    r = subprocess.run([sys.executable, pipefwd_ctl, "--file-prefix", FILE_PREFIX, "--json"] +
                       list(args), capture_output=True, text=True, timeout=20)
    return json.loads(r.stdout) if r.returncode == 0 else None


def stage_ctrs(pipefwd_ctl, name):
    j = ctl(pipefwd_ctl, "stages")
    for st in (j or {}).values() if isinstance(j, dict) else []:
        if isinstance(st, dict) and st.get("name") == name:
            c = dict(st.get("drops", {}))
            c.update(st.get("counters", {}))
            return c
    return {}


def tcp_both_ways(size):
    """The peer serves; the host side sends `size` bytes and gets as many back."""
    data = os.urandom(size)
    srv = subprocess.Popen(["ip", "netns", "exec", NS_PEER, sys.executable, "-c", """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.1.0.2", 7179)); s.listen(1); s.settimeout(20)
c, a = s.accept(); c.settimeout(20); n = int(sys.argv[1]); d = b""
while len(d) < n:
    x = c.recv(65536)
    if not x: break
    d += x
c.sendall(d); c.close()
""", str(size)])
    time.sleep(0.5)
    cli = subprocess.run(["ip", "netns", "exec", NS_HOST, sys.executable, "-c", """
import hashlib, socket, sys
data = sys.stdin.buffer.read()
s = socket.create_connection(("10.1.0.2", 7179), timeout=20); s.sendall(data)
d = b""
while len(d) < len(data):
    x = s.recv(65536)
    if not x: break
    d += x
print(hashlib.sha256(d).hexdigest())
"""], input=data, capture_output=True, timeout=40)
    srv.wait(timeout=30)
    return cli.stdout.decode().strip() == hashlib.sha256(data).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    a = ap.parse_args()
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "ping", "ethtool")):
        print("skipped: needs root, ip, ping and ethtool")
        return 77
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pipefwd_ctl = os.path.join(root, "scripts", "pipefwd-ctl")
    tmp = tempfile.mkdtemp(prefix="pf_host_")
    proc = None
    try:
        for ns in (NS_PEER, NS_HOST, NS_WIRE):
            sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", VETH, "type", "veth", "peer", "name", VETH_PEER, ns=NS_WIRE)
        sh("ip", "link", "set", VETH_PEER, "netns", NS_PEER, ns=NS_WIRE)
        sh("ip", "link", "add", BR, "type", "bridge", ns=NS_WIRE)
        sh("ip", "link", "set", VETH, "master", BR, "mtu", "1400", "up", ns=NS_WIRE)
        sh("ip", "link", "set", BR, "up", ns=NS_WIRE)
        # A veth hands AF_PACKET frames with partial checksums: the peer sums them.
        sh("ethtool", "-K", VETH_PEER, "tx", "off", ns=NS_PEER)
        sh("ip", "link", "set", VETH_PEER, "address", PEER_MAC, ns=NS_PEER)
        sh("ip", "addr", "add", "10.1.0.2/24", "dev", VETH_PEER, ns=NS_PEER)
        sh("ip", "addr", "add", "2001:db8:1::2/64", "dev", VETH_PEER, "nodad", ns=NS_PEER)
        sh("ip", "link", "set", VETH_PEER, "mtu", "1400", ns=NS_PEER)
        sh("ip", "link", "set", VETH_PEER, "up", ns=NS_PEER)
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(tap=TAP, mac=PORT_MAC, ns=NS_HOST, udp=UDP_RATE))
        log = open(os.path.join(tmp, "pipefwd.log"), "w")
        proc = subprocess.Popen(["ip", "netns", "exec", NS_WIRE, a.pipefwd, topo, "--",
                                 "--file-prefix=" + FILE_PREFIX],
                                stdout=log, stderr=subprocess.STDOUT)
        # The port's tap joins the wire once pipefwd made it.
        wait_for(lambda: sh("ip", "link", "show", TAP, ns=NS_WIRE, ok=False).returncode == 0, 20)
        # The kernel end of the tap carries the port's MAC: the bridge would keep
        # frames to it for itself. Another MAC there; pipefwd's is its own.
        sh("ip", "link", "set", TAP, "address", "02:00:00:ff:00:01", ns=NS_WIRE)
        sh("ip", "link", "set", TAP, "master", BR, "mtu", "1400", "up", ns=NS_WIRE)
        up = wait_for(lambda: sh("ip", "link", "show", "p0", ns=NS_HOST, ok=False).returncode == 0
                      and "NO-CARRIER" not in sh("ip", "link", "show", "p0", ns=NS_HOST).stdout,
                      20)
        check(up, "host interface p0 in %s, carrier up" % NS_HOST)
        if not up:
            log.flush()
            print(open(os.path.join(tmp, "pipefwd.log")).read()[-3000:])
            return 1
        l = link(NS_HOST)
        addrs = {(x["local"], x["prefixlen"]) for x in l["addr_info"]}
        check(l["address"] == PORT_MAC and l["mtu"] == 1400,
              "its MAC %s and MTU %s are the port's" % (l["address"], l["mtu"]))
        check(("10.1.0.1", 24) in addrs and ("2001:db8:1::1", 64) in addrs,
              "its addresses are the port's: %s" % sorted(addrs))
        sh("ip", "link", "set", TAP, "down", ns=NS_WIRE)
        check(wait_for(lambda: "NO-CARRIER" in sh("ip", "link", "show", "p0", ns=NS_HOST).stdout,
                       10), "the port's link down: the host interface has no carrier")
        sh("ip", "link", "set", TAP, "up", ns=NS_WIRE)
        check(wait_for(lambda: "NO-CARRIER" not in
                       sh("ip", "link", "show", "p0", ns=NS_HOST).stdout, 10),
              "the port's link up: carrier again")
        for dst in ("10.1.0.2", "2001:db8:1::2", "fe80::ff:fe0a:2%p0"):
            r = sh("ping", "-c", "3", "-i", "0.3", "-w", "10", dst, ns=NS_HOST, ok=False)
            check(r.returncode == 0, "the host namespace pings the peer at %s" % dst)
        r = sh("ping", "-c", "2", "-i", "0.2", "-W", "2", "-t", "1", "10.1.0.2", ns=NS_HOST,
               ok=False)
        check(r.returncode == 0, "a TTL-1 ping from the host reaches the peer (sent unchanged)")
        before = stage_ctrs(pipefwd_ctl, "lpm")
        r = sh("ping", "-c", "3", "-i", "0.2", "-W", "2", "10.1.0.1", ns=NS_PEER, ok=False)
        lpm = stage_ctrs(pipefwd_ctl, "lpm")
        replies = lpm.get("icmp_echo_reply", 0) - before.get("icmp_echo_reply", 0)
        punted = lpm.get("ip4_to_host", 0) - before.get("ip4_to_host", 0)
        check(r.returncode == 0 and replies == 3 and punted == 0,
              "the peer's pings to the router are answered by pipefwd (%d replies, %d to host)"
              % (replies, punted))
        check(tcp_both_ways(4 << 20), "4 MB of TCP each way between host and peer, sha256 equal")
        # A UDP flood to the router: over the rate, the excess is dropped by name.
        sh(sys.executable, "-c", """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(2000):
    s.sendto(b"x" * 64, ("10.1.0.1", 9))
""", ns=NS_PEER)
        time.sleep(1)
        h = stage_ctrs(pipefwd_ctl, "host")
        check(h.get("host_ratelimited_udp", 0) > 0,
              "UDP flood over %d/s: %d dropped as host_ratelimited_udp"
              % (UDP_RATE, h.get("host_ratelimited_udp", 0)))
        proc.send_signal(2)
        rc = proc.wait(timeout=30)
        proc = None
        out = open(os.path.join(tmp, "pipefwd.log")).read()
        check(rc == 0 and "unaccounted 0 (ok)" in out, "pipefwd exits 0, accounting exact")
        if rc != 0 or failures:
            print(out[-3000:])
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        for ns in (NS_PEER, NS_HOST, NS_WIRE):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
