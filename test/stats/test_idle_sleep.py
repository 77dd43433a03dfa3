#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""runtime.idle_sleep_us: an idle lcore gives its CPU back, and nothing else changes.

The same router (p0 -> p1, one lcore) runs twice on a pcap of 40 frames
that plays once, so it is idle after: once with `idle_sleep_us: 0` in the file
(which wins over PIPEFWD_IDLE_SLEEP_US), once with 200. Checked:
 - idle, the polling run takes CPU time the whole second sampled; the sleeping
   run takes under a third of what the polling run took (a busy machine gives
   the poller less, never the sleeper more);
 - `naps` in /pipefwd/lcores counts sleeps in the second run only, and
   /pipefwd/config says 0 and 200;
 - both runs forward every frame (the output pcap holds the 40 frames with
   TTL - 1), exit 0 with exact accounting;
 - bad values refused: `idle_sleep_us: 20000` at its file:line:col by
   --check, PIPEFWD_IDLE_SLEEP_US=abc at start (exit 78, named).

usage: test_idle_sleep.py PIPEFWD PIPEFWD_CTL
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
from pftest import checker, dpdk_rundir, finish, stop_pipefwd, telemetry  # noqa: E402
from pcaplib import read_pcap  # noqa: E402

from scapy.all import IP, UDP, Ether, wrpcap  # noqa: E402

PIPEFWD = os.path.abspath(sys.argv[1])
FAILS = []
check = checker(FAILS)
N = 40

TOPO = """\
eal: [--no-huge, -m, "256", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/in.pcap", mac: "02:00:00:00:00:10",
        ipv4: 10.0.0.1/24 }}
  p1: {{ device: "net_pcap1,tx_pcap={tmp}/out{nap}.pcap", mac: "02:00:00:00:00:11",
        ipv4: 10.1.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: lpm }} }}
  lpm:
    type: lpm
    nexthops:
      h: {{ port: p1, mac: "02:00:00:00:01:01" }}
    routes:
      - {{ prefix: 10.9.0.0/16, via: h }}
    next: tx
  tx: {{ type: tx, ports: [p1] }}
runtime: {{ idle_sleep_us: {nap} }}
lcores:
  1: [rx, lpm, tx]
"""


def cpu_ticks(pid):
    """utime + stime of @pid, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def run(tmp, nap):
    prefix = "cidle%d_%d" % (nap, os.getpid())
    topo = os.path.join(tmp, "t%d.yaml" % nap)
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp, nap=nap))
    stats = os.path.join(tmp, "s%d.json" % nap)
    log = open(os.path.join(tmp, "log%d" % nap), "w")
    env = dict(os.environ, PIPEFWD_IDLE_SLEEP_US="50")   # the file's value must win
    proc = subprocess.Popen([PIPEFWD, "-j", stats, topo, "--", "--file-prefix=" + prefix],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    sock = os.path.join(dpdk_rundir(prefix), "dpdk_telemetry.v2")
    res = {}
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                if telemetry(sock, "/pipefwd/totals", 5).get("tx", 0) == N:
                    break
            except (OSError, ValueError, AttributeError):
                pass
            time.sleep(0.1)
        a = cpu_ticks(proc.pid)
        time.sleep(1.0)
        res["ticks"] = cpu_ticks(proc.pid) - a
        res["config"] = telemetry(sock, "/pipefwd/config", 5).get("idle_sleep_us")
        res["naps"] = sum(v.get("naps", 0) for v in telemetry(sock, "/pipefwd/lcores", 5).values()
                          if isinstance(v, dict))
    except (OSError, ValueError) as e:
        check(False, "nap %d: telemetry: %s" % (nap, e))
    finally:
        rc = stop_pipefwd(proc, log, dpdk_rundir(prefix))
    check(rc == 0, "nap %d: exit %d: %s" % (nap, rc, open(log.name).read()[-1500:]))
    if rc == 0:
        tot = json.load(open(stats))["totals"]
        check(tot["rx"] == N and tot["tx"] == N and tot["unaccounted"] == 0,
              "nap %d: totals %s" % (nap, tot))
        out = read_pcap(os.path.join(tmp, "out%d.pcap" % nap), strict=True)
        want = []
        for i in range(N):
            q = frame(i)
            q[Ether].src, q[Ether].dst = "02:00:00:00:00:11", "02:00:00:00:01:01"
            q[IP].ttl -= 1
            del q[IP].chksum
            want.append(bytes(Ether(bytes(q))))
        check(out == want, "nap %d: %d frames out, %d as the model" % (
            nap, len(out), sum(a == b for a, b in zip(out, want))))
    return res


def frame(i):
    return (Ether(src="02:00:00:00:0a:01", dst="02:00:00:00:00:10") /
            IP(src="10.0.0.2", dst="10.9.0.%d" % (i + 1), ttl=64) /
            UDP(sport=1000 + i, dport=2000) / bytes(18))


def refusals(tmp):
    topo = os.path.join(tmp, "bad.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp, nap=20000))
    r = subprocess.run([PIPEFWD, "--check", topo], capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and "bad.yaml:17:" in r.stderr and "idle_sleep_us" in r.stderr,
          "idle_sleep_us: 20000 not refused at its place: %d %r" % (r.returncode, r.stderr))
    good = os.path.join(tmp, "t0.yaml")
    r = subprocess.run([PIPEFWD, "--check", good], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PIPEFWD_IDLE_SLEEP_US="abc"))
    check(r.returncode == 0, "the file's idle_sleep_us did not win over a bad "
          "PIPEFWD_IDLE_SLEEP_US: %d %r" % (r.returncode, r.stderr))
    nokey = os.path.join(tmp, "nokey.yaml")
    with open(nokey, "w") as f:
        f.write(TOPO.format(tmp=tmp, nap=0).replace("runtime: { idle_sleep_us: 0 }\n", ""))
    r = subprocess.run([PIPEFWD, "-q", "-d", "1", nokey, "--",
                        "--file-prefix=cidlebad_%d" % os.getpid()],
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PIPEFWD_IDLE_SLEEP_US="abc"))
    check(r.returncode == 78 and "PIPEFWD_IDLE_SLEEP_US 'abc'" in r.stderr,
          "PIPEFWD_IDLE_SLEEP_US=abc: exit %d %r" % (r.returncode, r.stderr[-500:]))


def main():
    tmp = tempfile.mkdtemp(prefix="pf_idle_")
    wrpcap(os.path.join(tmp, "in.pcap"), [frame(i) for i in range(N)])
    poll = run(tmp, 0)
    nap = run(tmp, 200)
    print("idle CPU over 1 s: polling %s ticks, sleeping %s ticks; naps %s" % (
        poll.get("ticks"), nap.get("ticks"), nap.get("naps")))
    check(poll.get("config") == 0 and nap.get("config") == 200,
          "/pipefwd/config idle_sleep_us: %s, %s" % (poll.get("config"), nap.get("config")))
    check(poll.get("naps") == 0 and nap.get("naps", 0) > 100,
          "naps: polling %s, sleeping %s" % (poll.get("naps"), nap.get("naps")))
    check(poll.get("ticks", 0) >= 20, "the polling run took %s ticks of CPU in 1 s idle" %
          poll.get("ticks"))
    check(nap.get("ticks", 1 << 30) * 3 < poll.get("ticks", 0),
          "sleeping run took %s ticks, polling %s" % (nap.get("ticks"), poll.get("ticks")))
    refusals(tmp)
    if not FAILS:
        print("ok")
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
