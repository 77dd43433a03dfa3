#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rx that scales: rx instances on several queues of multi-queue devices.

    /usr/bin/python3 test/netns/multiqueue.py --pipefwd build/app/pipefwd config
    /usr/bin/python3 test/netns/multiqueue.py --pipefwd build/app/pipefwd tap

config: the configuration paths on vdevs, no root needed. net_null offers RSS
(queues 2, symmetric key, RETA 128), net_ring does not (one queue and a
warning), `rss: off` forces one queue. Two rx instances on two lcores read
queue 0 and queue 1: /pipefwd/ports shows both of net_null's queues
receiving and net_ring's queue 1 empty; the startup log names the offloads
per port; accounting is exact at exit.

tap: real traffic. Host A (namespace) sends 64 UDP flows, each numbering its
packets, through pipefwd (lpm, rx with `instances: 2` on two lcores) to host
B over net_tap ports with two queues each (the kernel spreads flows over a
tap's queues by flow hash). Checks: both rx instances receive, every flow
arrives at B in its own order (sequence numbers strictly increase), no flow
is lost whole, and pipefwd's accounting is exact at SIGINT. tap-affine: the
same with `affine: true` and lpm instances: rx.k feeds lpm.k only. Needs root and
ip (skipped, exit 77, without). Namespaces are named PF_NETNS_PREFIX (env,
default "pfmq" + 4 hex digits of the pid) + a/b and deleted at the end; traffic never leaves them.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import router  # noqa: E402  (namespace helpers, retargeted below)

PFX = os.environ.get("PF_NETNS_PREFIX", "pfmq%04x" % (os.getpid() & 0xffff))
TAG = "mq%d" % os.getpid()
FLOWS = 64
PER_FLOW = 200
UDP_PORT = 9000

CONFIG_TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: { device: "net_null0", mac: "02:00:00:00:00:10" }
  p1: { device: "net_ring0", mac: "02:00:00:00:00:11" }
  p2: { device: "net_null1", mac: "02:00:00:00:00:12", rss: off }
stages:
  rx: { type: rx, ports: [p0, p1, p2], instances: 2, next: tx }
  tx: { type: tx, ports: [p0, p1, p2], instances: 2 }
lcores:
  1: [rx.0, tx.0]
  2: [rx.1, tx.1]
"""

TAP_TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning, --no-telemetry]
ports:
  p0: {{ device: "net_tap0,iface={ta}", mac: "02:00:00:00:00:10", ipv4: 10.1.0.1/24 }}
  p1: {{ device: "net_tap1,iface={tb}", mac: "02:00:00:00:00:11", ipv4: 10.2.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [p0, p1], instances: 2, next: {{ ipv4: lpm, arp: lpm }} }}
  lpm:
    type: lpm
    nexthops:
      ha: {{ port: p0, mac: "{ma}" }}
      hb: {{ port: p1, mac: "{mb}" }}
    routes:
      - {{ prefix: 10.1.0.0/24, via: ha }}
      - {{ prefix: 10.2.0.0/24, via: hb }}
    next: tx
  tx: {{ type: tx, ports: [p0, p1] }}
runtime: {{ backpressure: true }}
lcores:
  1: [rx.0, lpm, tx]
  2: [rx.1]
"""

# affine: rx.k feeds lpm.k on its own lcore (the tap's queues hold whole flows).
TAP_AFFINE = TAP_TOPO.replace("instances: 2, next:", "instances: 2, affine: true, next:").replace(
    "    type: lpm\n", "    type: lpm\n    instances: 2\n").replace(
    "  1: [rx.0, lpm, tx]\n  2: [rx.1]\n", "  1: [rx.0, lpm.0, tx]\n  2: [rx.1, lpm.1]\n")

# Host A: FLOWS sockets (one source port each), PER_FLOW numbered datagrams
# per flow, interleaved, paced a little so the taps' queues do not overflow.
SENDER = r"""
import socket, sys, time
dst, port, flows, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
socks = []
for f in range(flows):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 20000 + f))
    socks.append(s)
for seq in range(per):
    for f, s in enumerate(socks):
        s.sendto(b"%d %d " % (f, seq) + b"x" * 64, (dst, port))
    time.sleep(0.002)
"""

# Host B: every datagram's (flow, seq) in arrival order, as JSON, once the
# sender has been quiet for 2 s.
RECEIVER = r"""
import json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("0.0.0.0", int(sys.argv[1])))
print("ready", flush=True)
s.settimeout(float(sys.argv[2]))
got = []
try:
    s.settimeout(30)
    d, a = s.recvfrom(2048)
    got.append(d.split()[:2] + [a[1]])
    s.settimeout(2)
    while True:
        d, a = s.recvfrom(2048)
        got.append(d.split()[:2] + [a[1]])
except socket.timeout:
    pass
print(json.dumps([[int(g[0]), int(g[1]), g[2]] for g in got]))
"""


def tel(sock_path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(sock_path)
    s.recv(4096)
    s.send(cmd.encode())
    r = json.loads(s.recv(1 << 16).decode())
    s.close()
    return r[cmd.split(",")[0]]


def stop(proc, errors):
    """SIGINT, then the rest of pipefwd's output (killed after 20 s)."""
    proc.send_signal(signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate()
        errors.append("pipefwd did not stop within 20 s of SIGINT")
    return rest


def run_config(pipefwd, errors):
    tmp = tempfile.mkdtemp(prefix="pf-mq-")
    topo, stats = os.path.join(tmp, "mq.yaml"), os.path.join(tmp, "stats.json")
    prefix = TAG + "_config"
    rundir = ("/var/run/dpdk/" if os.geteuid() == 0 else
              os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk/")) + prefix
    with open(topo, "w") as f:
        f.write(CONFIG_TOPO)
    proc = subprocess.Popen([pipefwd, "-j", stats, topo, "--", "--file-prefix=" + prefix],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ports = {}
    try:
        sock = os.path.join(rundir, "dpdk_telemetry.v2")
        end = time.monotonic() + 20
        while not os.path.exists(sock) and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.1)
        # null until the runtime is up; then let both instances poll a while.
        while time.monotonic() < end and tel(sock, "/pipefwd/ports") is None:
            time.sleep(0.2)
        time.sleep(1.0)
        ports = tel(sock, "/pipefwd/ports")
    except (OSError, ValueError, KeyError) as e:
        errors.append("telemetry: %r" % e)
    finally:
        out = stop(proc, errors)
        shutil.rmtree(rundir, ignore_errors=True)
    expect_log = [
        r"port p0 \(net_null, socket \d+\): rxq 2 txq 2 rss\(ipv4 ipv4-tcp ipv4-udp ipv6 "
        r"ipv6-tcp ipv6-udp key symmetric, reta 128\)",
        r"port p1: device offers no RSS: 2 rx queues asked, 1 configured",
        r"port p1 \(net_ring, socket \d+\): rxq 1 txq 2 no offloads",
        r"port p2: rss: off: 2 rx queues asked, 1 configured",
        r"port p2 \(net_null, socket \d+\): rxq 1 txq 2 no offloads",
        r"unaccounted 0 \(ok\)",
    ]
    for pat in expect_log:
        if re.search(pat, out) is None:
            errors.append("config: log lacks /%s/" % pat)
    if proc.returncode != 0:
        errors.append("config: pipefwd exited %d" % proc.returncode)
    if ports:
        q0 = ports["p0"].get("rx_queues", [])
        if len(q0) != 2 or min(q0) == 0:
            errors.append("config: p0 (RSS, 2 queues) rx_queues %r: both must receive" % q0)
        if ports["p0"].get("q_ipackets", [0, 0])[1] == 0:
            errors.append("config: p0 q_ipackets %r" % ports["p0"].get("q_ipackets"))
        q2 = ports["p2"].get("rx_queues", [])
        if len(q2) != 2 or q2[0] == 0 or q2[1] != 0:
            errors.append("config: p2 (rss: off) rx_queues %r: queue 1 must stay empty" % q2)
        print("config: rx_queues p0 %r p1 %r p2 %r" % (q0, ports["p1"].get("rx_queues"), q2))
    try:
        with open(stats) as f:
            st = json.load(f)["stages"]
        for s in ("rx.0", "rx.1"):
            if st.get(s, {}).get("packets", 0) == 0:
                errors.append("config: %s read nothing" % s)
    except (OSError, ValueError, KeyError) as e:
        errors.append("config: stats JSON: %r" % e)
    shutil.rmtree(tmp, ignore_errors=True)
    if errors:
        print(out)


def check_order(got, errors):
    """Per flow, sequence numbers strictly increase; report what arrived."""
    last, count = {}, {}
    for flow, seq, sport in got:
        if sport != 20000 + flow:
            errors.append("flow %d arrived from port %d" % (flow, sport))
        if seq <= last.get(flow, -1):
            errors.append("flow %d: seq %d after %d (reordered)" % (flow, seq, last[flow]))
        last[flow] = seq
        count[flow] = count.get(flow, 0) + 1
    missing = [f for f in range(FLOWS) if f not in count]
    if missing:
        errors.append("flows never arrived: %r" % missing)
    return sum(count.values())


def check_affine(rings, errors):
    """rx.k -> lpm.k carried the traffic, handed over directly on their lcore
    (no ring: the crossed pairs' rings never carry, so nothing is polled);
    the crossed pairs carried nothing."""
    def moved(name):
        r = rings.get(name, {})
        return r.get("enqueued", 0) + r.get("direct", 0)
    for k in (0, 1):
        if moved("rx.%d->lpm.%d" % (k, k)) == 0:
            errors.append("affine: rx.%d->lpm.%d carried nothing" % (k, k))
        if rings.get("rx.%d->lpm.%d" % (k, k), {}).get("enqueued", 0) != 0:
            errors.append("affine: rx.%d->lpm.%d went through its ring (%d packets), not "
                          "direct on one lcore" % (k, k, rings["rx.%d->lpm.%d" % (k, k)]["enqueued"]))
        if moved("rx.%d->lpm.%d" % (k, 1 - k)) != 0:
            errors.append("affine: rx.%d->lpm.%d carried %d packets" %
                          (k, 1 - k, moved("rx.%d->lpm.%d" % (k, 1 - k))))


def run_tap(pipefwd, errors, affine=False):
    router.NS = {"a": PFX + "a", "b": PFX + "b"}
    router.TAP = {"a": PFX + "t0", "b": PFX + "t1"}
    tmp = tempfile.mkdtemp(prefix="pf-mq-")
    topo, stats = os.path.join(tmp, "mq.yaml"), os.path.join(tmp, "stats.json")
    prefix = TAG + "_tap"
    with open(topo, "w") as f:
        text = TAP_AFFINE if affine else TAP_TOPO
        f.write(text.format(ta=router.TAP["a"], tb=router.TAP["b"],
                            ma=router.HOST_MAC["a"], mb=router.HOST_MAC["b"]))
    router.cleanup()
    proc = recv = None
    out, got = "", []
    try:
        for h in router.NS:
            router.sh("ip", "netns", "add", router.NS[h])
        proc, out = router.start_pipefwd([pipefwd, "-j", stats, topo, "--",
                                          "--file-prefix=" + prefix])
        for h in router.NS:
            router.wait_link(router.TAP[h])
            router.setup_host(h)
        # The path works before the flows start (ARP resolved both ways).
        router.ns("a", "ping", "-c", "2", "-i", "0.2", "-W", "2", router.HOST_IP["b"],
                  timeout=15, check=False)
        recv = subprocess.Popen(["ip", "netns", "exec", router.NS["b"], "/usr/bin/python3",
                                 "-c", RECEIVER, str(UDP_PORT), "30"],
                                stdout=subprocess.PIPE, text=True)
        if recv.stdout.readline().strip() != "ready":
            raise RuntimeError("receiver did not start")
        router.ns("a", "/usr/bin/python3", "-c", SENDER, router.HOST_IP["b"], str(UDP_PORT),
                  str(FLOWS), str(PER_FLOW), timeout=120)
        rout, _ = recv.communicate(timeout=60)
        got = json.loads(rout)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
        errors.append(str(e))
    finally:
        if recv is not None and recv.poll() is None:
            recv.kill()
        if proc is not None:
            out += stop(proc, errors)
            if proc.returncode != 0:
                errors.append("pipefwd exited %s" % proc.returncode)
            if re.search(r"unaccounted 0 \(ok\)", out) is None:
                errors.append("accounting line not exact")
            for pat in (r"port p0 \(net_tap, socket -?\d+\): rxq 2 txq 2 rss\(",
                        r"port p1 \(net_tap, socket -?\d+\): rxq 2 txq 2 rss\("):
                if re.search(pat, out) is None:
                    errors.append("log lacks /%s/" % pat)
        router.cleanup()
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    n = check_order(got, errors) if got else 0
    if not got:
        errors.append("host B received nothing")
    try:
        with open(stats) as f:
            st = json.load(f)
        per = {s: st["stages"].get(s, {}).get("packets", 0) for s in ("rx.0", "rx.1")}
        if affine:
            check_affine(st["rings"], errors)
        print("tap: %d of %d datagrams at B in order; rx.0 %d, rx.1 %d packets" %
              (n, FLOWS * PER_FLOW, per["rx.0"], per["rx.1"]))
        # Each instance must carry a real share of the flows, not a stray ARP.
        for s, v in per.items():
            if v < FLOWS * PER_FLOW // 10:
                errors.append("%s read %d packets: the flows did not spread over both "
                              "queues" % (s, v))
    except (OSError, ValueError, KeyError) as e:
        errors.append("stats JSON: %r" % e)
    shutil.rmtree(tmp, ignore_errors=True)
    if errors:
        print(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipefwd", required=True)
    ap.add_argument("part", choices=("config", "tap", "tap-affine"))
    args = ap.parse_args()
    errors = []
    if args.part == "config":
        run_config(args.pipefwd, errors)
    else:
        if os.geteuid() != 0 or shutil.which("ip") is None:
            print("SKIP: needs root and ip")
            return 77
        run_tap(args.pipefwd, errors, affine=args.part == "tap-affine")
    for e in errors[:40]:
        print("FAIL:", e)
    if errors:
        return 1
    print("PASS multiqueue %s" % args.part)
    return 0


if __name__ == "__main__":
    sys.exit(main())
