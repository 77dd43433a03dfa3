#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ports as an operator sees them: link, speed, MTU, counters, xstats, rates,
and one log line per link change, against what the test controls.

pipefwd runs in a network namespace of its own (so its net_tap ports stay
beside it and their link follows `ip link set`): rx -> xconnect p0 <-> p1 ->
tx. The test writes frames it built (scapy, varied sizes) into p0's tap from
the kernel side and counts what comes out of p1's tap.
  - `ports --json`: both links up at 10000 Mbit/s full duplex, MTU 1500,
    net_tap, one queue each way; p0 rx = ipackets = the frames sent, ibytes
    = their bytes; p1 tx = opackets = the frames counted on its tap, obytes
    their bytes; the driver's xstats (`port p0 --json`) agree; the `ports`
    and `port` tables and the Prometheus text carry the same;
  - `ports --interval` over a quiet second: every rate 0;
  - p1's tap set down: `ports` shows p1 down within seconds, the log says
    `port p1: link down` once; frames for it then are link_down drops
    (exactly as many as sent, no tx_full, no retries) and no tx_full line is
    logged; set up again: one `link up ... after ... down` line that counts
    them, link_changes 2, and frames reach the tap again;
  - SIGINT: exit 0, accounting exact.
Needs root and ip: skipped (exit 77) without. The namespace is deleted at
the end; traffic never leaves it.

usage: test_ports.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import Ctl  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PFX = os.environ.get("PF_NETNS_PREFIX", "pfpo%04x" % (os.getpid() & 0xffff))
NS, TAP0, TAP1 = PFX + "w", PFX + "t0", PFX + "t1"
FILE_PREFIX = "stats_ports%d" % os.getpid()
SRC_MAC = "02:00:00:0a:0b:01"
FAILS = []

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_tap0,iface={t0}", mac: "02:00:00:00:07:10" }}
  p1: {{ device: "net_tap1,iface={t1}", mac: "02:00:00:00:07:11" }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: xc }} }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, xc, tx]
"""

# Runs in the namespace: "send IFACE FILE" writes the hex frames of FILE
# (one a line) into IFACE; "count IFACE MAC N SECONDS" prints "ready", then
# the number of frames from MAC that IFACE received before N came or time ran out.
HELPER = """\
import socket, sys, time
cmd, iface = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((iface, 0))
if cmd == "send":
    for line in open(sys.argv[3]):
        s.send(bytes.fromhex(line.strip()))
        time.sleep(0.0005)
    sys.exit(0)
mac, want, end = bytes.fromhex(sys.argv[3].replace(":", "")), int(sys.argv[4]), \\
    time.monotonic() + float(sys.argv[5])
print("ready", flush=True)
n = 0
s.settimeout(0.2)
while n < want and time.monotonic() < end:
    try:
        f, addr = s.recvfrom(65536)
    except socket.timeout:
        continue
    if addr[2] != socket.PACKET_OUTGOING and f[6:12] == mac:
        n += 1
print(n, flush=True)
"""


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg, flush=True)
    if not cond:
        FAILS.append(msg)
    return cond


def sh(*cmd, check_rc=True):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check_rc and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


def in_ns(*cmd):
    return ["ip", "netns", "exec", NS] + list(cmd)


def frames(n, first):
    """@n IPv4/UDP frames from SRC_MAC, numbered from @first, 60 to ~1000 bytes (scapy)."""
    from scapy.all import Ether, IP, UDP, Raw  # noqa: E402
    out = []
    for i in range(first, first + n):
        p = Ether(src=SRC_MAC, dst="02:00:00:00:07:10") / IP(src="10.7.0.1", dst="10.7.1.1",
                                                             id=i) / \
            UDP(sport=1000 + i % 50, dport=2000) / Raw(bytes(18 + (i * 37) % 940))
        out.append(bytes(p))
    return out


def send(tmp, iface, fr):
    path = os.path.join(tmp, "frames.hex")
    with open(path, "w") as f:
        f.write("".join(x.hex() + "\n" for x in fr))
    subprocess.run(in_ns("/usr/bin/python3", os.path.join(tmp, "helper.py"), "send", iface,
                         path), check=True, timeout=60)


def send_counted(tmp, fr):
    """Send @fr into p0's tap, count what p1's tap gets; returns the count."""
    cnt = subprocess.Popen(in_ns("/usr/bin/python3", os.path.join(tmp, "helper.py"), "count",
                                 TAP1, SRC_MAC, str(len(fr)), "20"),
                           stdout=subprocess.PIPE, text=True)
    check(cnt.stdout.readline().strip() == "ready", "counter on %s ready" % TAP1)
    send(tmp, TAP0, fr)
    out = cnt.communicate(timeout=40)[0].strip()
    return int(out) if out.isdigit() else -1


def wait_for(pred, seconds=15.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    return pred()


def ports(ctl):
    return ctl.json("ports")


def ports_starting(ctl):
    """ports() while pipefwd starts: the telemetry socket exists before
    pipefwd serves its commands (pipefwd-ctl: "not serving stats"), which is
    no failure yet; the wait decides."""
    r = ctl("--json", "ports", ok=False)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def main():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        print("SKIP: needs root and ip")
        return 77
    tmp = tempfile.mkdtemp(prefix="pf-stats-ports-")
    topo, stats, logf = (os.path.join(tmp, n) for n in ("ports.yaml", "stats.json", "log"))
    with open(topo, "w") as f:
        f.write(TOPO.format(t0=TAP0, t1=TAP1))
    with open(os.path.join(tmp, "helper.py"), "w") as f:
        f.write(HELPER)
    ctl = Ctl(CTL, FILE_PREFIX, lambda c, m: c or check(c, m))
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    sh("ip", "netns", "add", NS)
    proc = None
    try:
        # No kernel chatter on the taps (router solicitations, MLD): only our frames.
        sh(*in_ns("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1"))
        log = open(logf, "w")
        proc = subprocess.Popen(in_ns(PIPEFWD, "-j", stats, topo, "--",
                                      "--file-prefix=" + FILE_PREFIX),
                                stdout=log, stderr=subprocess.STDOUT)
        up = wait_for(lambda: (ports_starting(ctl) if os.path.exists(
            "/var/run/dpdk/%s/dpdk_telemetry.v2" % FILE_PREFIX) else {}).get(
                "p1", {}).get("link") == "up", 30)
        check(up, "pipefwd started, p1's link up")
        p = ports(ctl)
        for name in ("p0", "p1"):
            x = p.get(name, {})
            check(x.get("link") == "up" and x.get("speed_mbps") == 10000 and
                  x.get("duplex") == "full", "%s: link up 10000 Mbit/s full: %r" % (
                      name, {k: x.get(k) for k in ("link", "speed_mbps", "duplex")}))
            check(x.get("mtu") == 1500 and x.get("max_frame") == 1514 and
                  x.get("dev_mtu") == 1500, "%s: mtu 1500 (frames 1514, device 1500)" % name)
            check(x.get("driver") == "net_tap" and x.get("rxq") == 1 and x.get("txq") == 1,
                  "%s: net_tap, 1 rx and 1 tx queue" % name)
            check(x.get("link_changes") == 0, "%s: no link change yet" % name)

        # Counters equal the frames sent.
        fr = frames(200, 0)
        got = send_counted(tmp, fr)
        nbytes = sum(len(x) for x in fr)
        wait_for(lambda: ports(ctl)["p1"]["tx"] >= len(fr), 10)
        p = ports(ctl)
        a, b = p["p0"], p["p1"]
        check(got == len(fr), "p1's tap got %d of %d frames" % (got, len(fr)))
        check(a["rx"] == a["ipackets"] == len(fr) and a["ibytes"] == nbytes,
              "p0 rx %d ipackets %d ibytes %d: want %d frames, %d bytes" % (
                  a["rx"], a["ipackets"], a["ibytes"], len(fr), nbytes))
        check(b["tx"] == b["opackets"] == len(fr) and b["obytes"] == nbytes,
              "p1 tx %d opackets %d obytes %d: want %d frames, %d bytes" % (
                  b["tx"], b["opackets"], b["obytes"], len(fr), nbytes))
        check(a["rx_queues"] == [len(fr)] and b["q_opackets"] == [len(fr)],
              "per queue: p0 rx %r, p1 tx %r" % (a["rx_queues"], b["q_opackets"]))
        xs = ctl.json("port", "p0").get("p0", {}).get("xstats", {})
        check(xs.get("rx_good_packets") == len(fr) and xs.get("rx_good_bytes") == nbytes,
              "p0 xstats rx_good_packets/bytes %r/%r" % (xs.get("rx_good_packets"),
                                                        xs.get("rx_good_bytes")))
        out = ctl("ports").stdout
        check(re.search(r"^p0\s+up 10G full\s+1500\s+net_tap\s+%d\s+%d\s" % (len(fr), nbytes),
                        out, re.M) is not None, "ports table:\n" + out)
        out = ctl("port", "p1").stdout
        check("link      up 10G full, 0 changes" in out and
              "tx        %d packets by pipefwd" % len(fr) in out, "port p1:\n" + out)
        out = ctl("ports", "--interval", "1").stdout
        rows = re.findall(r"^(p[01])\s+up 10G full\s+(\d+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+"
                          r"(\d+)\s+(\d+)$", out, re.M)
        check(len(rows) == 2 and all(set(r[1:]) <= {"0", "0.00"} for r in rows),
              "ports --interval over a quiet second, every rate 0:\n" + out)
        prom = ctl("prom").stdout
        for line in ('pipefwd_port_link_up{port="p1"} 1',
                     'pipefwd_port_speed_bytes_per_second{port="p0"} 1250000000',
                     'pipefwd_port_mtu_bytes{port="p0"} 1500',
                     'pipefwd_port_rx_bytes_total{port="p0"} %d' % nbytes,
                     'pipefwd_port_info{port="p0",driver="net_tap",mac="02:00:00:00:07:10"} 1'):
            check(line in prom, "prom: " + line)
        if shutil.which("promtool"):
            r = subprocess.run(["promtool", "check", "metrics"], input=prom,
                               capture_output=True, text=True)
            check(r.returncode == 0, "promtool check metrics: " + r.stdout + r.stderr)

        # p1's link down: seen, logged once; its frames are link_down drops.
        sh(*in_ns("ip", "link", "set", TAP1, "down"))
        check(wait_for(lambda: ports(ctl)["p1"]["link"] == "down"), "p1 shown down")
        down = frames(100, 1000)
        send(tmp, TAP0, down)
        wait_for(lambda: ports(ctl)["p0"]["rx"] >= len(fr) + len(down), 10)
        time.sleep(1.5)     # the drop watch would have logged a tx_full line by now
        b = ports(ctl)["p1"]
        check(b["link_down_drops"] == len(down) and b["tx_full"] == 0 and
              b["tx"] == len(fr), "p1 down: link_down %d tx_full %d tx %d (want %d, 0, %d)" % (
                  b["link_down_drops"], b["tx_full"], b["tx"], len(down), len(fr)))
        txst = ctl.json("stages", "tx").get("tx", {}).get("drops", {})
        check(txst.get("link_down") == len(down) and txst.get("tx_full") == 0,
              "tx stage drops %r" % txst)
        out = ctl("ports").stdout
        check(re.search(r"^p1\s+down\s+1500\s", out, re.M) is not None,
              "ports table shows p1 down:\n" + out)
        sh(*in_ns("ip", "link", "set", TAP1, "up"))
        check(wait_for(lambda: ports(ctl)["p1"]["link"] == "up"), "p1 shown up again")
        again = frames(50, 2000)
        got = send_counted(tmp, again)
        check(got == len(again), "after link up p1's tap got %d of %d" % (got, len(again)))
        b = ports(ctl)["p1"]
        check(b["link_changes"] == 2, "p1 link_changes %d (want 2)" % b["link_changes"])
    except (RuntimeError, subprocess.SubprocessError, KeyError, ValueError) as e:
        check(False, "error: %r" % e)
    finally:
        rc = None
        if proc is not None:
            proc.send_signal(signal.SIGINT)
            try:
                rc = proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            log.close()
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)
        shutil.rmtree("/var/run/dpdk/" + FILE_PREFIX, ignore_errors=True)
    text = open(logf).read()
    check(rc == 0, "pipefwd exit %r" % rc)
    check(re.search(r"unaccounted 0 \(", text) is not None, "accounting line exact")
    n_down = len(re.findall(r"port p1: link down after", text))
    n_up = len(re.findall(r"port p1: link up, 10 Gbps full-duplex after [\d.]+ s down; "
                          r"100 frames for it dropped meanwhile \(link_down 100, tx_full 0\)",
                          text))
    check(n_down == 1 and n_up == 1, "one link down line (%d), one link up line (%d)" % (
        n_down, n_up))
    check("tx_full" not in text.replace("tx_full 0)", ""), "no tx_full line in the log")
    try:
        st = json.load(open(stats))
        check(st["totals"]["unaccounted"] == 0 and st["totals"]["rx"] == 350,
              "stats JSON totals %r" % st["totals"])
    except (OSError, ValueError, KeyError) as e:
        check(False, "stats JSON: %r" % e)
    if FAILS:
        print("log:\n" + text[-3000:])
        print("kept " + tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
