#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Data-path cost of the capture hook: cycles per packet of rx -> xconnect -> tx.

usage: cost.py [--runs N] [--secs S] [--capture TARGET] LABEL=PIPEFWD [LABEL=PIPEFWD ...]

Each binary runs the same topology (one worker lcore running rx, xc and tx,
net_pcap infinite_rx=1 of 64-byte frames into net_null), alternating between
binaries, N runs each. A run measures, over S seconds after a 1 s warm-up,
the worker thread's CPU time (/proc/PID/task/TID/schedstat, ns: time the
thread was really on a CPU, so other load on a shared machine does not
count) and the packets sent (/pipefwd/totals), and reports
cpu_ns * tsc_hz / 1e9 / packets. It also prints the -j JSON's per-stage
cycles/packet summed over the three stages (rdtsc around each stage's
burst; wall clock, so preemption counts there). --capture arms a capture
of TARGET for 10^9 packets into a scratch file first (the cost while one
runs).
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import XC_TOPOLOGY, numbered_udp, telemetry, write_pcap  # noqa: E402

TOPO = XC_TOPOLOGY.replace("{infinite}", ",infinite_rx=1")


def worker_tid(pid):
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            if open("/proc/%d/task/%s/comm" % (pid, tid)).read().startswith("rte-worker-1"):
                return int(tid)
        except OSError:
            pass
    return None


def cpu_ns(pid, tid):
    return int(open("/proc/%d/task/%d/schedstat" % (pid, tid)).read().split()[0])


def one_run(binary, tmp, tag, secs, capture):
    topo = os.path.join(tmp, "topo.yaml")
    js = os.path.join(tmp, "%s.json" % tag)
    prefix = "cap_cost_%d_%s" % (os.getpid(), tag)
    p = subprocess.Popen([binary, "-q", "-d", str(secs + 3), "-j", js, topo, "--",
                          "--file-prefix=" + prefix],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rundir = "/var/run/dpdk/" if os.geteuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
    sock = os.path.join(rundir, prefix, "dpdk_telemetry.v2")
    try:
        for _ in range(200):
            if os.path.exists(sock) and worker_tid(p.pid):
                break
            time.sleep(0.05)
        tid = worker_tid(p.pid)
        if capture:
            for _ in range(200):
                if telemetry(sock, "/pipefwd/capture_status") is not None:
                    break
                time.sleep(0.05)
            cap = os.path.join(tmp, "cost_%s.pcapng" % tag)
            r = telemetry(sock, "/pipefwd/capture,%s,1000000000,overwrite,%s" % (capture, cap))
            assert r.get("state") == "running", r
        time.sleep(1.0)
        c0, t0 = cpu_ns(p.pid, tid), telemetry(sock, "/pipefwd/totals")["tx"]
        time.sleep(secs)
        c1, t1 = cpu_ns(p.pid, tid), telemetry(sock, "/pipefwd/totals")["tx"]
        hz = telemetry(sock, "/pipefwd/config")["tsc_hz"]
        p.send_signal(signal.SIGINT)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        subprocess.run(["rm", "-rf", os.path.join(rundir, prefix)])
    rep = json.load(open(js))
    stage = sum(s["cycles_per_packet"] for s in rep["stages"].values())
    return (c1 - c0) * hz / 1e9 / (t1 - t0), stage


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--secs", type=float, default=2.0)
    ap.add_argument("--capture", default=None)
    ap.add_argument("builds", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pipefwd_cost_")
    pcap = os.path.join(tmp, "in.pcap")
    write_pcap(pcap, [numbered_udp(i) for i in range(1024)], stamp=lambda i: (1, i))
    with open(os.path.join(tmp, "topo.yaml"), "w") as f:
        f.write(TOPO.format(pcap=pcap))
    builds = [b.split("=", 1) for b in a.builds]
    res = {label: ([], []) for label, _ in builds}
    for r in range(a.runs):
        for label, binary in builds:
            cpp, st = one_run(binary, tmp, "%s%d" % (label, r), a.secs, a.capture)
            res[label][0].append(cpp)
            res[label][1].append(st)
            print("run %d %-10s cpu cycles/packet %6.1f   JSON stage sum %6.1f" % (
                r, label, cpp, st), flush=True)
    print("\n%-10s %8s %8s %14s" % ("build", "min", "median", "JSON stage med"))
    for label, _ in builds:
        c, s = res[label]
        print("%-10s %8.1f %8.1f %14.1f" % (label, min(c), statistics.median(c),
                                            statistics.median(s)))
    subprocess.run(["rm", "-rf", tmp])
    return 0


if __name__ == "__main__":
    sys.exit(main())
