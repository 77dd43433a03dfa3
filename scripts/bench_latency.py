#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What latency measuring costs a fused lcore, in Mpps (issue 31 item 3).

    scripts/bench_latency.py BUILD [--case l3-1k] [--rounds 20] [--secs 1.0]

One pipefwd runs scripts/bench.py's fused topology of CASE; the window
alternates latency off / on (`/pipefwd/latency,on|off`) ROUNDS times, each
window SECS long, and reads the sink's opackets around it. Same process,
same lcores, windows a second apart: a load change between rounds cancels
in the paired ratio (on / the off window before it); the median of those
is the figure. (Instructions per packet: scripts/bench_instr.py --arm
/pipefwd/latency,on.)
"""
import argparse
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--case", default="l3-1k")
    ap.add_argument("--layout", default="fused")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--secs", type=float, default=1.0)
    ap.add_argument("--file-prefix", default="benchlat%d" % os.getpid())
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    ba = argparse.Namespace(build=args.build, quick=True, rounds=1, only=None, note=None,
                            no_report=True, compare=None, file_prefix=args.file_prefix)
    b = bench.Bench(ba)
    c = next(x for x in bench.CASES if x["name"] == args.case)
    topo, _, _, _ = b.topology(c, args.layout)
    prefix = args.file_prefix + "_pf"
    log = open(os.path.join(b.out, "logs", "latency-cost.log"), "w")
    p = subprocess.Popen([b.pipefwd, "-q", "-d", "3600", topo, "--", "--file-prefix=" + prefix],
                         stdout=log, stderr=subprocess.STDOUT)
    pairs, rates = [], {"off": [], "on": []}
    try:
        end = time.monotonic() + 120
        while True:
            try:
                if bench.sink_opackets(prefix) > 0:
                    break
            except (OSError, ValueError, KeyError, TypeError):
                pass
            if p.poll() is not None or time.monotonic() > end:
                sys.exit("bench_latency: pipefwd did not forward (see %s)" % log.name)
            time.sleep(0.1)
        time.sleep(1.0)
        for k in range(args.rounds):
            got = {}
            for state in ("off", "on"):
                bench.telemetry(prefix, "/pipefwd/latency," + state, timeout=20)
                time.sleep(0.1)
                t0, a = time.monotonic(), bench.sink_opackets(prefix)
                time.sleep(args.secs)
                t1, z = time.monotonic(), bench.sink_opackets(prefix)
                got[state] = (z - a) / (t1 - t0) / 1e6
                rates[state].append(got[state])
            pairs.append(got["on"] / got["off"] if got["off"] else 0)
            print("round %2d: off %.2f Mpps, on %.2f Mpps, on/off %.3f" % (
                k + 1, got["off"], got["on"], pairs[-1]), flush=True)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=60)
    lat = bench.median(pairs)
    print("%s %s: off %.2f Mpps, on %.2f Mpps (medians of %d windows of %.1f s); "
          "median paired on/off %.3f: latency on costs %.1f %%" % (
              args.case, args.layout, bench.median(rates["off"]), bench.median(rates["on"]),
              args.rounds, args.secs, lat, 100 * (1 - lat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
