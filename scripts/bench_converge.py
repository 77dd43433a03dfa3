#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Convergence benchmark (issue 30 item 9): routes from the network, at scale.

    sudo /usr/bin/python3 scripts/bench_converge.py --pipefwd build/app/pipefwd \
        [--frr 100000,1000000] [--feed 1000000] [--churn 100000] [--json out.json]

Not part of `make test` (minutes, and wall-clock figures): `make bench-converge`.
Everything runs in network namespaces this script creates and deletes (names
start with "pfcv" and its pid); nothing leaves them. Two parts, each with its
own pipefwd:

frr  BIRD (peer A, AS 65001) announces N static routes (gen_routes.py's
     Internet-like length mix) over eBGP to FRR (AS 65000: bgpd, zebra with
     dplane_fpm_nl) in the router namespace; the session runs through
     pipefwd's port p0 (punt and inject), zebra writes the routes into the
     router namespace's kernel FIB and sends them to pipefwd's FPM source: the
     same feed, both ends. t0 is `birdc enable` of the static protocols (the
     daemon's first update); the figures are the time until pipefwd's source
     holds all N (/pipefwd/sources routes_ipv4: decoded and applied) and until
     the kernel's main table holds all N (/proc/net/fib_triestat of zebra's
     namespace), and their ratio (target <= 1.1). Then a block of --churn
     routes is withdrawn (`birdc disable`) and announced again, timed at both
     ends; pipefwd's RSS with N loaded.
feed FRR cannot churn at 200k/s (zebra is the bottleneck: see the frr part's
     churn), so pipefwd's own update rate is measured with a DIRECT FPM FEEDER
     (this script, speaking FPM + rtnetlink over TCP to a second pipefwd's FPM
     listener, as zebra does): M routes loaded, pipefwd's RSS; then the churn
     block withdrawn and announced again, timed from the first byte sent to
     the source's count (updates/s, target >= 200k/s with 1M loaded); then
     forwarding during churn: two net_pcap ports replay traffic forever, one
     to addresses whose route never changes (its next hop on port pa), one to
     addresses inside the churned block (next hop on pb, no covering route);
     Mpps is sampled in turn idle, with CPU 0 kept busy by a spinning process
     (the control: on a shared machine the other jobs then crowd the lcore's
     CPU, churn or not) and while the block is withdrawn and announced in a
     loop (target >= 0.9x), per wall-clock second and per CPU second of the
     forwarding lcore; at the end, pipefwd
     stopped, every packet of the stable stream must have left pa
     (misrouted = rx(ps) - tx(pa), target 0) and every packet of the churned
     stream left pb or was dropped for want of a route.
The expected ports come from the model (this script's own longest-prefix
match over the routes it generated), never from pipefwd. Needs root, ip, FRR
(frr) and BIRD (bird2) for the frr part; `uptime` is printed at each step (the
machine may be shared: compare the ratios, measured in the same run).
"""
import argparse
import ctypes
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "netns"))
import gen_routes  # noqa: E402
import netnslib as nl  # noqa: E402
import pcaplib  # noqa: E402
from netnslib import sh, wait_for  # noqa: E402

ctl_mod = SourceFileLoader("pipefwd_ctl", os.path.join(HERE, "pipefwd-ctl")).load_module()

PFX = "pfcv%04x" % (os.getpid() & 0xffff)
# The forwarding lcore on the last CPU, alone; pipefwd's main lcore (and its route
# thread), the daemons and this script on CPU 0: a router's control plane on a core
# of its own, its forwarding on another.
LAST_CPU = (os.cpu_count() or 1) - 1
LCORES = "--lcores=0@0,1@%d" % LAST_CPU
CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL("libc.so.6", use_errno=True)


def uptime():
    return open("/proc/loadavg").read().split()[:3]


def log(*a):
    print("[%s load %s]" % (time.strftime("%H:%M:%S"), " ".join(uptime())), *a, flush=True)


def in_netns(ns, fn):
    """@fn() run by this thread inside namespace @ns (a socket keeps its namespace)."""
    me = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    there = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + ns)
        return fn()
    finally:
        libc.setns(me, CLONE_NEWNET)
        os.close(me)
        os.close(there)


def ip_str(a):
    return gen_routes.ip_str(a)


def routes_for(n, seed):
    """@n unique prefixes of the Internet-like mix, none in 10/8 (the ports') or
    169/8 (link-local 169.254/16 is skipped by the sources, as it should be)."""
    out = [r for r in gen_routes.gen(n + n // 50 + 100, seed) if r[0] >> 24 not in (10, 169)]
    return out[:n]


# ---- pipefwd --------------------------------------------------------------------------------

class Pipefwd:
    def __init__(self, binary, ns, topo_text, tmp, tag):
        self.prefix = "conv_%s_%d" % (tag, os.getpid())
        self.topo = os.path.join(tmp, tag + ".yaml")
        self.log = os.path.join(tmp, tag + ".log")
        with open(self.topo, "w") as f:
            f.write(topo_text)
        self.proc = nl.start_pipefwd(binary, ns, self.topo, self.prefix, self.log)
        self.tel = None

    def connect(self, seconds=60):
        path = ctl_mod.socket_path(self.prefix)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError("pipefwd exited:\n" + open(self.log).read()[-3000:])
            try:
                self.tel = ctl_mod.Telemetry(path)
                return self.tel.cmd("/pipefwd/config") is not None
            except ctl_mod.TelemetryError:
                return False
        if not wait_for(up, seconds, 0.3):
            raise RuntimeError("pipefwd does not serve stats:\n" + open(self.log).read()[-3000:])

    def cmd(self, c):
        return self.tel.cmd(c)

    def source(self, name):
        return (self.cmd("/pipefwd/sources") or {}).get(name, {})

    def rss_mib(self):
        for line in open("/proc/%d/status" % self.proc.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
        return 0.0

    def cpu_s(self, comm):
        """CPU seconds the thread named @comm ran (schedstat): what the machine's other
        jobs took from it does not count."""
        d = "/proc/%d/task" % self.proc.pid
        for t in os.listdir(d):
            try:
                if open(os.path.join(d, t, "comm")).read().strip() == comm:
                    return int(open(os.path.join(d, t, "schedstat")).read().split()[0]) / 1e9
            except OSError:
                pass
        return 0.0

    def tid(self, comm):
        d = "/proc/%d/task" % self.proc.pid
        for t in os.listdir(d):
            try:
                if open(os.path.join(d, t, "comm")).read().strip() == comm:
                    return int(t)
            except OSError:
                pass
        return None

    def ports(self):
        """port name -> (rx packets, tx packets) of pipefwd's own counters."""
        out = {}
        for p in (self.cmd("/pipefwd/ports") or {}).values():
            if isinstance(p, dict) and "name" in p:
                out[p["name"]] = p
        return out

    def stop(self):
        """SIGINT; (exit code, log text)."""
        if self.tel is not None:
            self.tel.close()
        self.proc.send_signal(2)
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        return rc, open(self.log).read()


# ---- FPM: what zebra's dplane_fpm_nl sends ---------------------------------------------------

RTM_NEWROUTE, RTM_DELROUTE = 24, 25
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_PRIORITY = 1, 4, 5, 6
NLM_F_REQUEST, NLM_F_REPLACE, NLM_F_CREATE = 1, 0x100, 0x400
RTPROT_BGP = 186


def rta(t, data):
    return struct.pack("=HH", 4 + len(data), t) + data


def route_msg(new, a, plen, gw, oif, seq):
    attrs = rta(RTA_DST, struct.pack("!I", a)) + rta(RTA_PRIORITY, struct.pack("=I", 20))
    if new:
        attrs += rta(RTA_GATEWAY, struct.pack("!I", gw)) + rta(RTA_OIF, struct.pack("=I", oif))
    body = struct.pack("=BBBBBBBBI", socket.AF_INET, plen, 0, 0, 254, RTPROT_BGP, 0,
                       1, 0) + attrs
    flags = NLM_F_REQUEST | (NLM_F_CREATE | NLM_F_REPLACE if new else 0)
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWROUTE if new else RTM_DELROUTE, flags,
                       seq, 0) + body


def fpm_stream(msgs):
    """FPM frames (version 1, netlink, 16-bit length) of up to ~64 KiB each."""
    out, cur = [], []
    size = 4
    for m in msgs:
        if size + len(m) > 65000:
            out.append(struct.pack("!BBH", 1, 1, size) + b"".join(cur))
            cur, size = [], 4
        cur.append(m)
        size += len(m)
    if cur:
        out.append(struct.pack("!BBH", 1, 1, size) + b"".join(cur))
    return b"".join(out)


# ---- the frr part -----------------------------------------------------------------------------

FRR_TOPO = """\
eal: [--no-huge, -m, "{mem}", --no-pci, --log-level=lib.eal:warning, "{lcores}"]
ports:
  p0: {{ device: "net_tap0,iface={p0}", mac: "02:00:00:00:00:10", ipv4: 10.1.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: lpm, arp: neigh }} }}
  lpm: {{ type: lpm, learnt: {{ routes: {cap}, nexthops: 64, groups: 16, tbl8: 65536 }},
         next: {{ out: tx, neigh: neigh, host: host }} }}
  neigh: {{ type: neigh, next: {{ out: tx, host: host }} }}
  host: {{ type: host, namespace: {ns_r}, rate: {{ tcp: 100000, burst: 5000 }}, next: tx }}
  tx: {{ type: tx, ports: [p0] }}
route_sources:
  frr: {{ type: fpm, listen: "127.0.0.1:2620", grace: 600, resync: 600 }}
lcores:
  1: [rx, lpm, neigh, host, tx]
"""

ZEBRA = """\
hostname r
log file @DIR@/zebra.log
fpm address 127.0.0.1 port 2620
"""

BGPD = """\
hostname r
log file @DIR@/bgpd.log
router bgp 65000
 bgp router-id 10.0.0.1
 no bgp ebgp-requires-policy
 no bgp network import-check
 neighbor 10.1.0.2 remote-as 65001
 neighbor 10.1.0.2 timers connect 1
"""

BIRD = """\
router id 10.0.0.2;
protocol device { }
protocol static s1 { disabled yes; ipv4;
include "%s";
}
protocol static s2 { disabled yes; ipv4;
include "%s";
}
protocol bgp r { local 10.1.0.2 as 65001; neighbor 10.1.0.1 as 65000;
  connect retry time 1; ipv4 { import none; export all; }; }
"""


def kernel_prefixes(pid):
    """Prefixes in the main table of @pid's namespace (the kernel FIB's own count)."""
    sect = None
    with open("/proc/%d/net/fib_triestat" % pid) as f:
        for line in f:
            s = line.strip()
            if s.endswith(":") and not s.startswith("Basic"):
                sect = s[:-1]
            elif sect == "Main" and s.startswith("Prefixes:"):
                return int(s.split()[1])
    return 0


def race(pf, source, kpid, want_pf, want_k, seconds, step):
    """Poll both ends until both reach their targets: the seconds from now until
    pipefwd and the kernel did, and their ratio, and the mean time between two
    polls (the figures' resolution)."""
    t0 = time.time()
    tp = tk = None
    end = t0 + seconds
    polls = 0
    while time.time() < end and (tp is None or tk is None):
        now = time.time()
        if tp is None and pf.source(source).get("routes_ipv4", -1) == want_pf:
            tp = now - t0
        if tk is None and kernel_prefixes(kpid) == want_k:
            tk = now - t0
        polls += 1
        time.sleep(step)
    return {"pipefwd": tp, "kernel": tk, "ratio": round(tp / tk, 3) if tp and tk else None,
            "poll_s": round((time.time() - t0) / max(polls, 1), 3)}


def birdc(ns, ctl, *cmd):
    return sh("birdc", "-s", ctl, *cmd, ns=ns, ok=False).stdout


def part_frr(args, tmp, n, results):
    churn = min(args.churn, n // 2)
    wire = nl.Wire(PFX + "f")
    frr = None
    pf = None
    bird = None
    res = {"routes": n, "churn": churn, "feeder": "BIRD -> eBGP -> FRR 8.4 (bgpd, zebra with "
           "dplane_fpm_nl) -> kernel FIB and pipefwd FPM"}
    try:
        ns_r = wire.namespace("r")
        ns_a = wire.host("p0", "a", "02:00:00:0a:00:02", ["10.1.0.2/24"])
        routes = routes_for(n, 30)
        for name, part in (("s1", routes[churn:]), ("s2", routes[:churn])):
            with open(os.path.join(tmp, name + ".conf"), "w") as f:
                f.write("".join("route %s/%d blackhole;\n" % (ip_str(a), l) for a, l in part))
        bird_conf = os.path.join(tmp, "bird.conf")
        with open(bird_conf, "w") as f:
            f.write(BIRD % (os.path.join(tmp, "s1.conf"), os.path.join(tmp, "s2.conf")))
        bird_ctl = os.path.join(tmp, "bird.ctl")
        topo = FRR_TOPO.format(mem=args.mem, lcores=LCORES, cap=max(n + 1000, 4096), ns_r=ns_r,
                               **wire.tap_names())
        pf = Pipefwd(args.pipefwd, wire.ns_w, topo, tmp, "frr%d" % n)
        if not wire.attach(pf.log):
            raise RuntimeError("pipefwd made no tap")
        pf.connect()
        wait_for(lambda: pf.source("frr").get("state") == "listening", 30)
        res["rss_empty_mib"] = round(pf.rss_mib(), 1)
        frr = nl.Frr(ns_r, os.path.join(tmp, "r"), {"zebra": ZEBRA, "bgpd": BGPD}, fpm=True)
        frr.start("zebra")
        frr.start("bgpd")
        bird = subprocess.Popen(["ip", "netns", "exec", ns_a, "bird", "-f", "-c", bird_conf,
                                 "-s", bird_ctl])
        up = wait_for(lambda: "Established" in birdc(ns_a, bird_ctl, "show", "protocols",
                                                     "r"), 90, 1)
        if not up or not wait_for(lambda: pf.source("frr").get("state") == "up", 30):
            raise RuntimeError("BGP or FPM not up: %s\n%s" % (
                birdc(ns_a, bird_ctl, "show", "protocols", "all", "r"), frr.logs()))
        kpid = frr.procs["zebra"].pid
        time.sleep(2)
        base_k = kernel_prefixes(kpid)
        base_pf = pf.source("frr").get("routes_ipv4", 0)
        step = 0.05 if n <= 200000 else 0.2
        log("frr part: %d routes; kernel holds %d prefixes, pipefwd %d learnt; enable" %
            (n, base_k, base_pf))
        birdc(ns_a, bird_ctl, "enable", "s1")
        birdc(ns_a, bird_ctl, "enable", "s2")
        res["load_s"] = race(pf, "frr", kpid, base_pf + n, base_k + n, 120 + n / 2000, step)
        log("frr load: %s" % res["load_s"])
        time.sleep(2)
        res["rss_loaded_mib"] = round(pf.rss_mib(), 1)
        src = pf.source("frr")
        res["source"] = {k: src.get(k) for k in ("routes_ipv4", "operations", "batches",
                                                 "replace_pairs", "added", "replaced",
                                                 "deleted", "refused", "pending")}
        # The churn block withdrawn, then announced again, through the whole chain.
        birdc(ns_a, bird_ctl, "disable", "s2")
        res["withdraw_s"] = race(pf, "frr", kpid, base_pf + n - churn, base_k + n - churn,
                                 120 + churn / 1000, step)
        log("frr withdraw %d: %s" % (churn, res["withdraw_s"]))
        birdc(ns_a, bird_ctl, "enable", "s2")
        res["announce_s"] = race(pf, "frr", kpid, base_pf + n, base_k + n, 120 + churn / 1000,
                                 step)
        log("frr re-announce %d: %s" % (churn, res["announce_s"]))
        rc, text = pf.stop()
        pf = None
        res["exit_ok"] = rc == 0 and "unaccounted 0 (ok)" in text
    finally:
        if frr is not None:
            frr.stop_all()
        if bird is not None:
            bird.kill()
            bird.wait()
        nl.teardown(pf.proc if pf is not None else None, wire, None)
    results["frr_%d" % n] = res
    return res


# ---- the feed part ----------------------------------------------------------------------------

FEED_TOPO = """\
eal: [--no-huge, -m, "{mem}", --no-pci, --log-level=lib.eal:warning, "{lcores}"]
ports:
  ps: {{ device: "net_pcap0,rx_pcap={ps},infinite_rx=1", mac: "02:00:00:00:01:01",
        ipv4: 10.51.0.1/24 }}
  pc: {{ device: "net_pcap1,rx_pcap={pc},infinite_rx=1", mac: "02:00:00:00:01:02",
        ipv4: 10.52.0.1/24 }}
  pa: {{ device: "net_pcap2,rx_pcap={arp_a}", mac: "02:00:00:00:01:03", ipv4: 10.61.0.1/24 }}
  pb: {{ device: "net_pcap3,rx_pcap={arp_b}", mac: "02:00:00:00:01:04", ipv4: 10.62.0.1/24 }}
  pd: {{ device: "net_null0,no-rx=1", mac: "02:00:00:00:01:05", ipv4: 10.63.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [ps, pc, pa, pb], next: {{ ipv4: lpm, arp: neigh }} }}
  lpm: {{ type: lpm, learnt: {{ routes: {cap}, nexthops: 64, groups: 16, tbl8: 65536 }},
         nexthops: {{ nd: {{ port: pd, mac: "02:00:00:0a:63:02" }} }},
         routes: [{routes8}],
         next: {{ out: tx, neigh: neigh, host: host }} }}
  neigh: {{ type: neigh, reachable_ms: 3600000, retrans_ms: 60000, probes: 255,
           next: {{ out: tx, host: host }} }}
  host: {{ type: host, namespace: {ns_r}, next: tx }}
  tx: {{ type: tx, ports: [ps, pc, pa, pb, pd] }}
route_sources:
  feed: {{ type: fpm, listen: "127.0.0.1:2621", grace: 600, resync: 600 }}
lcores:
  1: [rx, lpm, neigh, host, tx]
"""
# The stable stream's /8s: configured routes to pd catch its packets until the
# learnt routes are in (the traffic starts with pipefwd), so every stable packet is
# accounted to a port: pd's count must not move once the routes are loaded.
STABLE8 = (23, 45, 66, 81, 98, 130, 151, 176, 193, 210)

GW_A, GW_B = 0x0a3d0002, 0x0a3e0002      # 10.61.0.2, 10.62.0.2
MAC_A, MAC_B = bytes([2, 0, 0, 0x0a, 0x61, 2]), bytes([2, 0, 0, 0x0a, 0x62, 2])


def arp_frames(port_mac, port_ip, mac, ip):
    """A request from the gateway for the port's address (creates the entry), then
    a reply to the port (confirms it): what a neighbour that just came up sends."""
    pm = bytes(int(x, 16) for x in port_mac.split(":"))
    req = b"\xff" * 6 + mac + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + \
        mac + struct.pack("!I", ip) + bytes(6) + struct.pack("!I", port_ip)
    rep = pm + mac + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + \
        mac + struct.pack("!I", ip) + pm + struct.pack("!I", port_ip)
    return [req + bytes(60 - len(req)), rep + bytes(60 - len(rep))]


def udp_frame(dmac, dst, i):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, i & 0xffff, 0, 64, 17, 0,
                     bytes([192, 168, 0, 9]), struct.pack("!I", dst))
    ip = ip[:10] + struct.pack("!H", gen_routes.csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 1024 + (i & 0x3fff), 9, 26, 0) + bytes(18)
    return dmac + bytes([2, 0, 0, 0, 0, 0xaa]) + b"\x08\x00" + ip + udp


class Model:
    """Longest-prefix match over the generated routes (the expected answer)."""

    def __init__(self, stable, churn):
        self.stable = set(stable)
        self.churn = set(churn)

    @staticmethod
    def matches(dst, table):
        return [(dst & ((0xffffffff << (32 - l)) & 0xffffffff), l) for l in range(32, 0, -1)
                if (dst & ((0xffffffff << (32 - l)) & 0xffffffff), l) in table]

    def stable_dst(self, rnd, routes):
        """An address in one of STABLE8 routed by a stable prefix longer than the /8,
        whatever the churned block does: expected port pa, always."""
        while True:
            a, l = routes[rnd.randrange(len(routes))]
            if a >> 24 not in STABLE8 or l <= 8:
                continue
            dst = a | (rnd.getrandbits(32) & ((1 << (32 - l)) - 1))
            if not self.matches(dst, self.churn) and self.matches(dst, self.stable)[0] == (a, l):
                return dst

    def churn_dst(self, rnd, routes):
        """An address routed by a churned prefix when it is announced (pb), by nothing
        when it is not (dropped, ip4_no_route)."""
        while True:
            a, l = routes[rnd.randrange(len(routes))]
            if a >> 24 in STABLE8:
                continue
            dst = a | (rnd.getrandbits(32) & ((1 << (32 - l)) - 1))
            if not self.matches(dst, self.stable) and self.matches(dst, self.churn)[0] == (a, l):
                return dst


def neighbors(pf):
    for st in (pf.cmd("/pipefwd/stages") or {}).values():
        if isinstance(st, dict) and st.get("name") == "neigh":
            return st.get("gauges", {}).get("entries", 0)
    return 0


class Feeder:
    """A zebra stand-in: one FPM connection to pipefwd's listener in @ns."""

    def __init__(self, ns, port):
        self.sock = in_netns(ns, lambda: socket.create_connection(("127.0.0.1", port), 10))
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        self.seq = 0

    def send(self, data):
        self.sock.sendall(data)

    def close(self):
        self.sock.close()


def feed_until(pf, feeder, data, want, seconds=300, step=0.02):
    """Send @data; seconds until the source holds @want routes (None: never)."""
    t0 = time.time()
    feeder.send(data)
    ok = wait_for(lambda: pf.source("feed").get("routes_ipv4", -1) == want, seconds, step)
    return time.time() - t0 if ok else None


def mpps(pf, seconds):
    """Over @seconds: packets pipefwd received on ps and pc, in Mpps of wall clock and
    per CPU second of the forwarding lcore; route updates per second meanwhile."""
    a, ua, ca = pf.ports(), pf.source("feed").get("operations", 0), pf.cpu_s("rte-worker-1")
    t0 = time.time()
    time.sleep(seconds)
    b, ub, cb = pf.ports(), pf.source("feed").get("operations", 0), pf.cpu_s("rte-worker-1")
    dt = time.time() - t0
    rx = sum(b[p]["rx"] - a[p]["rx"] for p in ("ps", "pc"))
    return rx / dt / 1e6, rx / max(cb - ca, 1e-9) / 1e6, (ub - ua) / dt, (cb - ca) / dt


def summary(text):
    """pipefwd's exit summary: port -> [rx, tx], lpm's drops by reason, the totals."""
    ports, drops, total = {}, {}, None
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] in ("ps", "pc", "pa", "pb", "pd") and f[1].isdigit():
            ports[f[0]] = [int(f[1]), int(f[2])]
        elif f[:2] == ["lpm", "lpm"]:
            drops = {k: int(v) for k, v in (x.split("=") for x in f if "=" in x and
                                              not x.startswith("["))}
        elif line.startswith("accounting:"):
            total = int(line.split("dropped")[1].split()[0])
    return ports, drops, total


def part_feed(args, tmp, m, results):
    churn = min(args.churn, m // 2)
    rnd = random.Random(7)
    res = {"routes": m, "churn": churn, "feeder": "direct FPM feeder (this script; "
           "rtnetlink over FPM as zebra sends it)"}
    routes = routes_for(m, 31)
    rnd.shuffle(routes)
    churned, stable = routes[:churn], routes[churn:]
    model = Model(stable, churned)
    ps_pcap, pc_pcap = os.path.join(tmp, "stable.pcap"), os.path.join(tmp, "churn.pcap")
    pcaplib.write_pcap(ps_pcap, (udp_frame(bytes([2, 0, 0, 0, 1, 1]), model.stable_dst(
        rnd, stable), i) for i in range(2048)))
    pcaplib.write_pcap(pc_pcap, (udp_frame(bytes([2, 0, 0, 0, 1, 2]), model.churn_dst(
        rnd, churned), i) for i in range(2048)))
    arp_a, arp_b = os.path.join(tmp, "arp_a.pcap"), os.path.join(tmp, "arp_b.pcap")
    pcaplib.write_pcap(arp_a, arp_frames("02:00:00:00:01:03", 0x0a3d0001, MAC_A, GW_A))
    pcaplib.write_pcap(arp_b, arp_frames("02:00:00:00:01:04", 0x0a3e0001, MAC_B, GW_B))
    wire = nl.Wire(PFX + "d")
    pf = None
    churner = None
    try:
        ns_r = wire.namespace("r")
        # The kernel sends nothing on the host interfaces (IPv6 off): every frame a port
        # sends is pipefwd's forwarding or its one ARP reply.
        for k in ("default", "all"):
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % k, ns=ns_r)
        topo = FEED_TOPO.format(mem=args.mem, lcores=LCORES, cap=m + 1000, ns_r=ns_r, ps=ps_pcap, pc=pc_pcap,
                                arp_a=arp_a, arp_b=arp_b, routes8=", ".join(
                                    "{ prefix: %d.0.0.0/8, via: nd }" % x for x in STABLE8))
        pf = Pipefwd(args.pipefwd, wire.ns_w, topo, tmp, "feed%d" % m)
        pf.connect()
        if not wait_for(lambda: pf.source("feed").get("state") == "listening", 30):
            raise RuntimeError("no FPM listener: %s" % pf.source("feed"))
        res["rss_empty_mib"] = round(pf.rss_mib(), 1)
        oif = {}
        for p in ("pa", "pb"):
            oif[p] = json.loads(sh("ip", "-j", "link", "show", p, ns=ns_r).stdout)[0]["ifindex"]
        t = time.time()
        add_stable = fpm_stream(route_msg(True, a, l, GW_A, oif["pa"], i)
                                for i, (a, l) in enumerate(stable))
        add_churn = fpm_stream(route_msg(True, a, l, GW_B, oif["pb"], i)
                               for i, (a, l) in enumerate(churned))
        del_churn = fpm_stream(route_msg(False, a, l, 0, 0, i) for i, (a, l) in enumerate(churned))
        log("feed part: %d routes (%d churned) encoded in %.1f s (%d bytes)" %
            (m, churn, time.time() - t, len(add_stable) + len(add_churn)))
        # Before the routes: what pa and pb sent is control (the ARP reply); the stable
        # stream leaves pd by the configured /8s, the churned one is dropped (no route).
        if not wait_for(lambda: (pf.cmd("/pipefwd/stages") is not None and
                                 neighbors(pf) >= 2), 30):
            raise RuntimeError("the gateways are not resolved")
        time.sleep(1)
        ctl0 = pf.ports()
        feeder = Feeder(ns_r, 2621)
        wait_for(lambda: pf.source("feed").get("state") == "up", 10)
        c0 = pf.cpu_s("pf-routes")
        dt = feed_until(pf, feeder, add_stable + add_churn, m, 600)
        res["load_per_cpu_s"] = round(m / max(pf.cpu_s("pf-routes") - c0, 1e-9))
        res["load_s"] = dt
        res["load_per_s"] = round(m / dt) if dt else None
        log("feed load: %s s" % dt)
        time.sleep(1)
        pd_loaded = pf.ports()["pd"]["tx"]
        res["rss_loaded_mib"] = round(pf.rss_mib(), 1)
        rates_del, rates_add = [], []
        cpu_del, cpu_add = [], []
        perf = None
        if args.perf:
            perf = subprocess.Popen(["perf", "record", "-q", "-g", "-o", args.perf, "-t",
                                     str(pf.tid("pf-routes"))], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(1)
        for k in range(args.rounds):
            c0 = pf.cpu_s("pf-routes")
            dt = feed_until(pf, feeder, del_churn, m - churn, 120)
            c1 = pf.cpu_s("pf-routes")
            rates_del.append(round(churn / dt) if dt else 0)
            cpu_del.append(round(churn / max(c1 - c0, 1e-9)))
            dt = feed_until(pf, feeder, add_churn, m, 120)
            c2 = pf.cpu_s("pf-routes")
            rates_add.append(round(churn / dt) if dt else 0)
            cpu_add.append(round(churn / max(c2 - c1, 1e-9)))
            log("churn round %d: withdraw %d/s (%d per CPU s of pf-routes), announce %d/s "
                "(%d per CPU s)" % (k, rates_del[-1], cpu_del[-1], rates_add[-1], cpu_add[-1]))
        if perf is not None:
            perf.send_signal(2)
            perf.wait()
            res["perf"] = "perf report -i %s --no-children" % args.perf
        res["withdraw_per_s"] = rates_del
        res["announce_per_s"] = rates_add
        res["withdraw_per_cpu_s"] = cpu_del
        res["announce_per_cpu_s"] = cpu_add
        src = pf.source("feed")
        res["source"] = {k: src.get(k) for k in ("routes_ipv4", "operations", "batches",
                                                 "added", "replaced", "deleted", "refused",
                                                 "pending")}
        # Forwarding: idle, then during churn, alternately.
        idle, busy = [], []
        stop = threading.Event()
        counts = {"cycles": 0}

        def churn_loop():
            while not stop.is_set():
                feeder.send(del_churn)
                feeder.send(add_churn)
                counts["cycles"] += 1
        churn_rates, idle_cpu, busy_cpu, share = [], [], [], []
        ctl_mpps, ctl_cpu = [], []
        for k in range(args.rounds):
            x, xc, _, sh0 = mpps(pf, args.window)
            idle.append(round(x, 3))
            idle_cpu.append(round(xc, 3))
            # The control: no churn, CPU 0 as busy as the churn makes it (a spinning
            # process), so that the other jobs of a shared machine crowd CPU 1 as they
            # do during the churn. What churn vs control differs by is the churn's own.
            burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            time.sleep(0.5)
            x, xc, _, shc = mpps(pf, args.window)
            burner.kill()
            burner.wait()
            ctl_mpps.append(round(x, 3))
            ctl_cpu.append(round(xc, 3))
            stop.clear()
            churner = threading.Thread(target=churn_loop)
            churner.start()
            time.sleep(0.5)
            x, xc, rate, sh1 = mpps(pf, args.window)
            busy.append(round(x, 3))
            busy_cpu.append(round(xc, 3))
            share.append([round(sh0, 2), round(sh1, 2), round(shc, 2)])
            churn_rates.append(round(rate))
            stop.set()
            churner.join()
            churner = None
            wait_for(lambda: pf.source("feed").get("routes_ipv4", -1) == m and
                     pf.source("feed").get("last_update_ms", 0) > 500, 120, 0.2)
            log("forwarding: idle %.3f Mpps (%.3f per lcore CPU s), CPU 0 busy %.3f (%.3f), "
                "during churn %.3f Mpps (%.3f per lcore CPU s; %d updates/s); the lcore had %s "
                "of its CPU" % (idle[-1], idle_cpu[-1], ctl_mpps[-1], ctl_cpu[-1], busy[-1],
                                busy_cpu[-1], rate, share[-1]))
        res["mpps_idle"] = idle
        res["mpps_churn"] = busy
        res["mpps_per_lcore_cpu_s_idle"] = idle_cpu
        res["mpps_per_lcore_cpu_s_churn"] = busy_cpu
        res["mpps_cpu0_busy"] = ctl_mpps
        res["mpps_per_lcore_cpu_s_cpu0_busy"] = ctl_cpu
        res["lcore_cpu_share_idle_churn"] = share
        res["updates_per_s_while_forwarding"] = churn_rates
        res["churn_cycles"] = counts["cycles"]
        pd_end = pf.ports()["pd"]["tx"]
        feeder.close()
        rc, text = pf.stop()
        pf = None
        res["exit_ok"] = rc == 0 and "unaccounted 0 (ok)" in text
        ports, drops, dropped = summary(text)
        ctl_a, ctl_b = ctl0["pa"]["tx"], ctl0["pb"]["tx"]
        no_route = drops.get("ip4_no_route", 0)
        res["check"] = {
            "ports_rx_tx": ports, "control_frames_pa_pb": [ctl_a, ctl_b],
            "lpm_drops": drops, "dropped_total": dropped,
            # every stable packet left pa (or pd before the routes were in)
            "stable_misrouted": ports["ps"][0] - (ports["pa"][1] - ctl_a) - ports["pd"][1],
            # none fell through to the /8 after the load (a hole in its route)
            "stable_to_pd_after_load": pd_end - pd_loaded,
            # every churned-stream packet left pb or found no route
            "churn_unexplained": ports["pc"][0] - (ports["pb"][1] - ctl_b) - no_route,
            "other_drops": dropped - no_route,
        }
        log("check: %s" % res["check"])
    finally:
        if churner is not None:
            stop.set()
            churner.join()
        nl.teardown(pf.proc if pf is not None else None, wire, None)
    results["feed_%d" % m] = res
    return res


def med(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def report(results):
    """The figures as the rows of docs/benchmarks.md's Convergence table."""
    rows = []
    for key, r in results.items():
        if key.startswith("frr_"):
            n = r["routes"]
            for what, k in (("load %d" % n, "load_s"), ("withdraw %d" % r["churn"], "withdraw_s"),
                            ("announce %d again" % r["churn"], "announce_s")):
                x = r.get(k) or {}
                rows.append("| FRR, %d routes | %s | pipefwd %s s, kernel FIB %s s (polled every "
                            "%s s) | **%s** |" % (n, what, fmt(x.get("pipefwd")),
                                                  fmt(x.get("kernel")), x.get("poll_s"),
                                                  x.get("ratio")))
            rows.append("| FRR, %d routes | pipefwd RSS | %s MiB loaded (%s MiB before) | |" %
                        (n, r.get("rss_loaded_mib"), r.get("rss_empty_mib")))
        elif key.startswith("feed_"):
            n = r["routes"]
            rows.append("| feeder, %d routes | load | %s s: %s/s, %s per CPU s of pf-routes | |" %
                        (n, fmt(r.get("load_s")), r.get("load_per_s"), r.get("load_per_cpu_s")))
            rows.append("| feeder, %d routes | pipefwd RSS | %s MiB loaded (%s MiB before) | |" %
                        (n, r.get("rss_loaded_mib"), r.get("rss_empty_mib")))
            for what in ("withdraw", "announce"):
                rows.append("| feeder, %d routes | %s %d: updates/s | %s wall; %s per CPU s of "
                            "pf-routes | |" % (n, what, r["churn"], r.get(what + "_per_s"),
                                              r.get(what + "_per_cpu_s")))
            idle, busy = r.get("mpps_idle", []), r.get("mpps_churn", [])
            ic, bc = r.get("mpps_per_lcore_cpu_s_idle", []), r.get("mpps_per_lcore_cpu_s_churn", [])
            share = r.get("lcore_cpu_share_idle_churn", [])
            ratios = [b / a for a, b, sh in zip(ic, bc, share) if a and b and min(sh) >= 0.05]
            cm, cc = r.get("mpps_cpu0_busy", []), r.get("mpps_per_lcore_cpu_s_cpu0_busy", [])
            rows.append("| feeder, %d routes | forwarding, Mpps idle / CPU 0 busy / churn (wall) "
                        "| %s / %s / %s (the lcore's CPU share idle, churn, CPU 0 busy: %s) | "
                        "%s against idle, %s against CPU 0 busy |" % (
                            n, idle, cm, busy, share,
                            round(med(busy) / med(idle), 2) if med(idle) else None,
                            round(med(busy) / med(cm), 2) if med(cm) else None))
            if cc:
                rc = [b / c for c, b in zip(cc, bc) if c and b]
                rows.append("| feeder, %d routes | forwarding, Mpps per lcore CPU s, CPU 0 busy / "
                            "churn | %s / %s | **%s** (rounds %s) |" % (
                                n, cc, bc, round(med(rc), 2) if rc else None,
                                [round(x, 2) for x in rc]))
            rows.append("| feeder, %d routes | forwarding, Mpps per lcore CPU s idle / churn | "
                        "%s / %s (%s updates/s meanwhile) | **%s** (rounds %s) |" % (
                            n, ic, bc, r.get("updates_per_s_while_forwarding"),
                            round(med(ratios), 2) if ratios else None,
                            [round(x, 2) for x in ratios]))
            c = r.get("check", {})
            rows.append("| feeder, %d routes | misrouted (model) | stable stream %s, to the "
                        "covering /8 after the load %s, churned stream unexplained %s, "
                        "other drops %s | |" % (n, c.get("stable_misrouted"),
                                                c.get("stable_to_pd_after_load"),
                                                c.get("churn_unexplained"),
                                                c.get("other_drops")))
    return "\n".join(rows)


def fmt(x):
    return "%.2f" % x if isinstance(x, float) else str(x)


def main():
    # Benchmarks measure polling lcores, as the peers poll: no idle sleep
    # (runtime.idle_sleep_us) inherited from a test harness's environment.
    os.environ.pop("PIPEFWD_IDLE_SLEEP_US", None)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipefwd", default=os.path.join(ROOT, "build", "app", "pipefwd"))
    ap.add_argument("--frr", default="100000", help="route counts fed through FRR, "
                    "comma-separated (0: skip)")
    ap.add_argument("--feed", type=int, default=1000000, help="routes loaded by the direct "
                    "feeder (0: skip)")
    ap.add_argument("--churn", type=int, default=100000, help="routes withdrawn and announced")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=3.0, help="seconds per Mpps sample")
    ap.add_argument("--mem", default="2048", help="EAL -m (MiB, --no-huge)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--perf", help="perf record the route thread during the feed part's "
                    "churn rounds into this file")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (network namespaces)")
        return 77
    if LAST_CPU > 0:
        os.sched_setaffinity(0, {0})
    tmp = tempfile.mkdtemp(prefix="pf_conv_")
    os.chmod(tmp, 0o711)
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "load_start": uptime(), "cmd": " ".join(sys.argv)}
    try:
        for n in [int(x) for x in args.frr.split(",") if int(x) > 0]:
            if not nl.frr_available() or not shutil.which("bird"):
                print("frr part skipped: needs FRR (frr) and BIRD (bird2)")
                break
            part_frr(args, tmp, n, results)
        if args.feed > 0:
            part_feed(args, tmp, args.feed, results)
    finally:
        results["load_end"] = uptime()
        shutil.rmtree(tmp, ignore_errors=True)
        out = json.dumps(results, indent=1, default=str)
        print(report(results))
        if args.json:
            with open(args.json, "w") as f:
                f.write(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
