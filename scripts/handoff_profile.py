#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where a cross-lcore edge's cycles go: callgrind with cache simulation, per thread.

    scripts/handoff_profile.py BUILD [--only l3-1k,full] [--layouts fused,pipelined]

Runs scripts/bench.py's cases (same topologies, tables, traffic) in each layout
under `valgrind --tool=callgrind --cache-sim=yes --separate-threads=yes`, counting
only a window once the sink transmits (as scripts/bench_instr.py does), and
prints per worker thread, per function, instructions and simulated cache misses
per packet (D1: 48 KiB, LL: 2 MiB, this machine's per-core L1d and L2).

What the simulation shows and what it does not: valgrind runs one thread at a
time and simulates ONE cache for all of them, so a line the producer wrote is
a hit for the consumer if it is still in that cache; there is no coherence
between cores. Valgrind switches threads every ~100k basic blocks (thousands of
packets), so the consumer reads lines written long ago: what misses D1 there is
what the consumer touches that its own work did not bring in, i.e. the lines a
real consumer must fetch from the producer's core (docs/scaling.md, "Where the
hand-off goes"). Every layout runs with `runtime: { backpressure: true }` so the
long timeslices fill rings without ring_full drops (pf_rt_room shows apart).
Instruction counts are exact; the packet count is the rx driver's calls times
pipefwd's own mean rx burst over the run (lossless bursts vary).
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench          # noqa: E402
import bench_instr    # noqa: E402

EVENTS = ["Ir", "D1mr", "D1mw", "DLmr", "DLmw"]
CACHE = ["--D1=49152,12,64", "--LL=2097152,16,64", "--I1=32768,8,64"]


def log(msg):
    print(msg, flush=True)


def annotate(path):
    """Exclusive cost per function: {fn: {event: count}} and the file's totals."""
    out = subprocess.run(["callgrind_annotate", "--show=" + ",".join(EVENTS),
                          "--threshold=100", path], capture_output=True, text=True,
                         timeout=300).stdout
    fns, totals = {}, None
    num = r"\s*([\d,]+|\.)(?: \([^)]*\))?"
    row = re.compile(r"^" + num * len(EVENTS) + r"\s+\*?\s*(\S.*)$")
    for ln in out.splitlines():
        m = row.match(ln)
        if not m:
            continue
        vals = [int(x.replace(",", "")) if x != "." else 0 for x in m.groups()[:len(EVENTS)]]
        name = m.group(len(EVENTS) + 1)
        if name.startswith("PROGRAM TOTALS"):
            totals = dict(zip(EVENTS, vals))
            continue
        fn = re.sub(r" \[.*\]$", "", name)
        fn = fn.split(":", 1)[1] if ":" in fn else fn
        d = fns.setdefault(fn, dict.fromkeys(EVENTS, 0))
        for e, v in zip(EVENTS, vals):
            d[e] += v
    return fns, totals


def sink(prefix):
    try:
        return bench.sink_opackets(prefix)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def topology(b, c, layout):
    topo, lmap, _, _ = b.topology(c, layout)
    topo = bench_instr.pin_acl_algorithm(topo)
    with open(topo) as f:
        text = f.read()
    path = topo[:-len(".yaml")] + "-lossless.yaml"
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\nruntime: { backpressure: true }\n")
    return path, lmap


def measure(args, b, case, layout):
    c = bench_instr.bench_case(case)
    topo, lmap = topology(b, c, layout)
    err = b.check(topo)
    if err:
        raise RuntimeError("--check %s: %s" % (topo, err))
    d = os.path.join(b.out, "handoff", "%s-%s" % (case, layout))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    prefix = "%s-%s-%s" % (args.prefix, case, layout)
    js = os.path.join(d, "stats.json")
    cmd = [b.pipefwd, "-q", "-d", "3600", "-j", js, topo, "--", "--file-prefix=" + prefix]
    vg = ["valgrind", "--tool=callgrind", "--fair-sched=yes", "--separate-threads=yes",
          "--instr-atstart=no", "--cache-sim=yes"] + CACHE + [
          "--callgrind-out-file=%s/cg.%%p" % d]
    with open(os.path.join(d, "log"), "w") as lf:
        lf.write(" ".join(vg + cmd) + "\n")
        lf.flush()
        p = subprocess.Popen(vg + cmd, stdin=subprocess.PIPE, stdout=lf, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + args.start_timeout
            while not sink(prefix):
                if p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("%s %s: not forwarding (see %s/log)" % (case, layout, d))
                time.sleep(0.2)
            bench_instr.ctl(["--instr=on", str(p.pid)])
            time.sleep(args.warmup)
            bench_instr.ctl(["-z", str(p.pid)])
            time.sleep(args.window)
            bench_instr.ctl(["-d", str(p.pid)])
            bench_instr.ctl(["--instr=off", str(p.pid)])
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    with open(js) as f:
        st = json.load(f)
    rx = st["stages"]["rx"]
    mean_burst = rx["packets"] / rx["bursts"]
    tx = st["stages"]["tx"]
    mean_tx_burst = tx["packets"] / tx["bursts"]
    threads = []
    for path in sorted(glob.glob(os.path.join(d, "cg.%d.1-*" % p.pid))):
        cg = bench_instr.parse_callgrind(path)
        threads.append(dict(file=path, ir=cg["ir"], drivers=cg["drivers"]))
    src = max((t for t in threads if bench_instr.RX_DRIVER in t["drivers"]),
              key=lambda t: t["ir"], default=None)
    if src is None:
        raise RuntimeError("%s %s: no thread called the rx driver" % (case, layout))
    pkts = src["drivers"][bench_instr.RX_DRIVER]["calls"] * mean_burst
    workers = [src]
    if layout != "fused":
        # The consumer: the busiest other thread that transmits.
        rest = [t for t in threads if t is not src and "librte_net_null" in t["drivers"]]
        if rest:
            workers.append(max(rest, key=lambda t: t["ir"]))
    res = dict(case=case, layout=layout, lcores=lmap, packets=round(pkts), per_thread_packets=[],
               mean_rx_burst=round(mean_burst, 2), topology=bench.rel(topo), threads=[])
    for i, t in enumerate(workers):
        # Per packet of its own: a consumer drains what was queued before the
        # window too, so it counts the packets it sent (tx driver calls x
        # pipefwd's mean tx burst), the source those it read.
        if i > 0 and "librte_net_null" in t["drivers"]:
            pkts = t["drivers"]["librte_net_null"]["calls"] * mean_tx_burst
        fns, tot = annotate(t["file"])
        per = {e: round(v / pkts, 2) for e, v in (tot or {}).items()}
        top = sorted(fns.items(), key=lambda kv: -kv[1]["Ir"])[:args.top]
        miss = sorted(fns.items(), key=lambda kv: -(kv[1]["D1mr"] + kv[1]["D1mw"]))[:args.top]
        res["per_thread_packets"].append(round(pkts))
        res["threads"].append(dict(
            role="lcore %s: %s" % (list(lmap)[i], ", ".join(list(lmap.values())[i])),
            packets=round(pkts),
            file=bench.rel(t["file"]), per_packet=per,
            top_ir=[dict(fn=f, **{e: round(v[e] / pkts, 2) for e in EVENTS}) for f, v in top],
            top_miss=[dict(fn=f, **{e: round(v[e] / pkts, 2) for e in EVENTS})
                      for f, v in miss if v["D1mr"] + v["D1mw"] > 0]))
    return res


def show(res):
    log("\n### %s, %s (%s packets, mean rx burst %s)" % (res["case"], res["layout"],
                                                         res["packets"], res["mean_rx_burst"]))
    for t in res["threads"]:
        p = t["per_packet"]
        log("\n%s (%d packets): %s instr, D1 misses %.2f read + %.2f write, LL misses %.2f + %.2f per packet"
            % (t["role"], t["packets"], p.get("Ir"), p.get("D1mr", 0), p.get("D1mw", 0), p.get("DLmr", 0),
               p.get("DLmw", 0)))
        log("\n| function | Ir | D1mr | D1mw | DLmr | DLmw |")
        log("|---|---|---|---|---|---|")
        seen = set()
        for row in t["top_ir"] + t["top_miss"]:
            if row["fn"] in seen:
                continue
            seen.add(row["fn"])
            log("| %s | %s |" % (row["fn"], " | ".join("%.2f" % row[e] for e in EVENTS)))


def main():
    # Benchmarks measure polling lcores, as the peers poll: no idle sleep
    # (runtime.idle_sleep_us) inherited from a test harness's environment.
    os.environ.pop("PIPEFWD_IDLE_SLEEP_US", None)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--only", default="l3-1k,full")
    ap.add_argument("--layouts", default="fused,pipelined")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--window", type=float, default=6.0)
    ap.add_argument("--start-timeout", type=int, default=300)
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--prefix", default="hprof%d" % os.getpid())
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    ba = argparse.Namespace(build=args.build, quick=True, rounds=1, only=None, note=None,
                            no_report=True, compare=None, file_prefix=args.prefix)
    b = bench.Bench(ba)
    out = []
    for case in args.only.split(","):
        for layout in args.layouts.split(","):
            try:
                r = measure(args, b, case, layout)
            except (RuntimeError, OSError, subprocess.SubprocessError, KeyError) as e:
                log("handoff_profile: %s %s: %s" % (case, layout, e))
                continue
            show(r)
            out.append(r)
    path = os.path.join(b.out, "handoff_profile.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    log("\nhandoff_profile: wrote %s" % bench.rel(path))
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main())
