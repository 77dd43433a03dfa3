#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rx scaling: one rx stage against two rx instances on two queues (docs/scaling.md).

    /usr/bin/python3 scripts/bench_rxq.py build [--rounds 3] [--secs 4]

The port is net_pcap with one rx_pcap per queue (`rss: external`: the files
fill the queues, as RSS would), each an infinite replay of bench.py's 64-byte
UDP traffic (4096 flows); the sink is net_null. Layouts, alternated round by
round (A B C D A B C D ...) so that the shared machine's load hits all alike:

  one      1 rx on queue 0, lpm, tx fused on lcore 1
  inst     rx/lpm/tx with instances: 2 on lcores 1 and 2 (rx.k reads queue k;
           the flow hash fans out to lpm.0/lpm.1, so half the packets cross)
  affine   the same with rx `affine: true`: rx.k feeds lpm.k on its own lcore
           (the queues already hold whole flows), nothing crosses
  split    two independent pipelines rx0(q0)->lpm0->tx0, rx1(q1)->lpm1->tx1
           (no crossing: the upper bound of an instance-affine edge)

The planner (--cpu, telemetry on): /pipefwd/plan,cores=2,rss=1 on the `one`
run predicts `rss-affine` (the `affine` layout) and `rss-fanout` (`inst`)
from that run's costs; printed beside the measurements, medians of the rounds.

Rate: pipefwd's own totals.tx over the run (-j), median of the rounds. And
per CPU second (--cpu): the packets sent over the middle half of the run
divided by the CPU time the workers had then (/proc/PID/task/TID/schedstat),
times the workers: what the layout forwards on CPUs of its own, whatever
else runs on the machine (every worker reads a queue that never runs dry, so
none idles; bench.py's free_cpu for the pipelined cases). When the workers
take turns on shared CPUs a ring between them overflows, and the work spent
on the dropped packets makes the figure low (the share dropped is printed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (traffic generator)

# The main lcore on CPU 0, the workers on 1 and 0 (bench.py's default CPU map
# on two CPUs; `make bench CPUS=...` passes its own).
PIN = "0@0,1@1,2@0"
HEAD = """\
eal: [--no-huge, -m, "1024", --no-pci, --log-level=lib.eal:warning,{tel}
      "--lcores={pin}"]
ports:
  p0: {{ device: "{dev}", mac: "02:00:00:00:00:10", rss: external }}
  p1: {{ device: "net_null0,no-rx=1" }}
"""
LPM = """\
    type: lpm
    nexthops: {{ nh: {{ port: p1, mac: "02:00:00:00:01:01" }} }}
    routes: [{{ prefix: 0.0.0.0/1, via: nh }}, {{ prefix: 128.0.0.0/1, via: nh }}]
    next: tx{sfx}
"""
LAYOUTS = {
    "one": (1, "stages:\n  rx: { type: rx, ports: [p0], next: { ipv4: lpm } }\n  lpm:\n" + LPM.format(sfx="")
            + "  tx: { type: tx, ports: [p1] }\nlcores:\n  1: [rx, lpm, tx]\n"),
    "inst": (2, "stages:\n  rx: { type: rx, ports: [p0], instances: 2, next: { ipv4: lpm } }\n"
             "  lpm:\n    instances: 2\n" + LPM.format(sfx="")
             + "  tx: { type: tx, ports: [p1], instances: 2 }\n"
             "lcores:\n  1: [rx.0, lpm.0, tx.0]\n  2: [rx.1, lpm.1, tx.1]\n"),
    "affine": (2, "stages:\n  rx: { type: rx, ports: [p0], instances: 2, affine: true, next: { ipv4: lpm } }\n"
               "  lpm:\n    instances: 2\n" + LPM.format(sfx="")
               + "  tx: { type: tx, ports: [p1], instances: 2 }\n"
               "lcores:\n  1: [rx.0, lpm.0, tx.0]\n  2: [rx.1, lpm.1, tx.1]\n"),
    "split": (2, "stages:\n" + "".join(
        "  rx%d: { type: rx, ports: [p0], queue: %d, next: { ipv4: lpm%d } }\n  lpm%d:\n" % (k, k, k, k)
        + LPM.format(sfx=k) + "  tx%d: { type: tx, ports: [p1] }\n" % k for k in (0, 1))
        + "lcores:\n  1: [rx0, lpm0, tx0]\n  2: [rx1, lpm1, tx1]\n"),
}


def cpu_rate(pid, prefix, secs):
    """Packets sent per second of the workers' CPU time, times the workers,
    over the middle half of a run of @secs."""
    def snap():
        tot = bench.telemetry(prefix, "/pipefwd/totals")["/pipefwd/totals"]
        return bench.worker_oncpu(pid), tot["tx"], tot["dropped"]
    time.sleep(secs / 4.0)
    a = snap()
    time.sleep(secs / 2.0)
    b = snap()
    # The workers that run stages (an lcore EAL has but the map leaves empty sleeps).
    ns = [b[0][k] - a[0][k] for k in b[0] if k in a[0]]
    ns = [x for x in ns if x > 0.1 * max(ns + [1])]
    tx, drop = b[1] - a[1], b[2] - a[2]
    if not ns or tx <= 0:
        return None, None
    return tx / (sum(ns) / 1e9) * len(ns) / 1e6, drop / (tx + drop)


def run(pipefwd, tmp, name, nq, secs, pcap, cpu=False, pin=PIN):
    dev = "net_pcap0," + ",".join("rx_pcap=%s" % pcap for _ in range(nq)) + ",infinite_rx=1"
    topo = os.path.join(tmp, name + ".yaml")
    js = os.path.join(tmp, name + ".json")
    with open(topo, "w") as f:
        f.write(HEAD.format(dev=dev, tel="" if cpu else " --no-telemetry,", pin=pin) +
                LAYOUTS[name][1])
    prefix = "rxq%d_%s" % (os.getpid(), name)
    p = subprocess.Popen([pipefwd, "-q", "-d", str(secs), "-j", js, topo, "--",
                          "--file-prefix=" + prefix],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rate = lost = None
    plan = {}
    if cpu:
        time.sleep(1.0)         # start-up: EAL, ports; -d counts from forwarding
        try:
            rate, lost = cpu_rate(p.pid, prefix, secs)
            if name == "one":
                pl = bench.telemetry(prefix, "/pipefwd/plan,cores=2,rss=1,window=%g" %
                                     max(secs / 2.0, 0.5), timeout=5.0)["/pipefwd/plan"]
                for lay in pl.get("layouts", {}).values():
                    if lay["lcores"] == 2 and lay["kind"] in ("rss-affine", "rss-fanout"):
                        plan[lay["kind"]] = lay["kpps"] / 1000.0
        except (OSError, ValueError, KeyError):
            rate = None
    if p.wait() != 0:
        raise subprocess.CalledProcessError(p.returncode, pipefwd)
    # EAL leaves its runtime dir behind.
    subprocess.run(["rm", "-rf", ("/var/run/dpdk/" if os.geteuid() == 0 else
                                  os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk/") + prefix])
    with open(js) as f:
        st = json.load(f)
    tx = st["totals"]["tx"]
    cyc = {k: v.get("cycles_per_packet", 0) for k, v in st["stages"].items()}
    return tx / secs / 1e6, cyc, rate, lost, plan


def measure(pipefwd, rounds, secs, cpu, pin=PIN, log=print):
    """Every layout, alternated round by round; medians, cycles, and the
    planner's rss-affine/rss-fanout from `one`'s runs beside affine/inst."""
    # Benchmarks measure polling lcores, as the peers poll: no idle sleep
    # (runtime.idle_sleep_us) inherited from a test harness's environment.
    os.environ.pop("PIPEFWD_IDLE_SLEEP_US", None)
    tmp = tempfile.mkdtemp(prefix="pf-rxq-")
    pcap = os.path.join(tmp, "64B.pcap")
    bench.write_pcap(pcap, bench.gen_traffic("64B"))
    res = {k: [] for k in LAYOUTS}
    per_cpu = {k: [] for k in LAYOUTS}
    cycles = {}
    plans = {"rss-affine": [], "rss-fanout": []}
    try:
        for r in range(rounds):
            for name, (nq, _) in LAYOUTS.items():
                mpps, cyc, rate, lost, plan = run(pipefwd, tmp, name, nq, secs, pcap, cpu, pin)
                for k, v in plan.items():
                    plans[k].append(v)
                res[name].append(mpps)
                if rate:
                    per_cpu[name].append(rate)
                cycles[name] = cyc
                log("round %d %-6s %.2f Mpps%s" % (
                    r + 1, name, mpps, "" if rate is None else
                    ", %.2f per CPU second (%.1f %% dropped: full rings)" % (rate, 100 * lost)))
    finally:
        subprocess.run(["rm", "-rf", tmp])
    out = dict(rounds=rounds, secs=secs, pin=pin, layouts={}, planner={})
    one = statistics.median(res["one"])
    one_cpu = statistics.median(per_cpu["one"]) if per_cpu["one"] else None
    for name, xs in res.items():
        m = statistics.median(xs)
        c = statistics.median(per_cpu[name]) if per_cpu[name] else None
        out["layouts"][name] = dict(mpps=xs, median=m, vs_one=m / one, cpu=per_cpu[name],
                                    cpu_median=c, cpu_vs_one=c / one_cpu if c and one_cpu
                                    else None, cycles=cycles[name])
        log("%-6s median %.2f Mpps (%s) %.2fx one%s; cycles/pkt %s" %
            (name, m, " ".join("%.2f" % x for x in xs), m / one,
             "" if not c or not one_cpu else "; per CPU second %.2f (%s) %.2fx one" % (
                 c, " ".join("%.2f" % x for x in per_cpu[name]), c / one_cpu),
             " ".join("%s=%.0f" % kv for kv in sorted(cycles[name].items()))))
    for kind, name in (("rss-affine", "affine"), ("rss-fanout", "inst")):
        if plans[kind] and res[name]:
            pred, m = statistics.median(plans[kind]), statistics.median(res[name])
            out["planner"][kind] = dict(layout=name, predicted=plans[kind], median=pred,
                                        measured=m, error_pct=100.0 * (pred - m) / m)
            log("planner %-10s from one's run %.2f Mpps (%s), %s measured %.2f: %+.0f %%" % (
                kind, pred, " ".join("%.2f" % x for x in plans[kind]), name, m,
                100.0 * (pred - m) / m))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=4)
    ap.add_argument("--cpu", action="store_true",
                    help="also the rate per CPU second (telemetry on)")
    args = ap.parse_args()
    measure(os.path.join(args.build, "app/pipefwd"), args.rounds, args.secs, args.cpu,
            log=lambda m: print(m, flush=True))


if __name__ == "__main__":
    sys.exit(main())
