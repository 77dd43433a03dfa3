#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: SIGTERM mid-traffic (graceful stop), and a second SIGTERM (forced exit).

    /usr/bin/python3 test/fault/sigterm.py --mode graceful|force [--pipefwd build/app/pipefwd]

graceful: a 2000-frame file loops (net_pcap infinite_rx=1) at 50 kpps through
  rx -> xc -> tx into a tx_pcap file, lossless (runtime.backpressure: rx takes
  only what the rings hold, so a descheduled tx lcore on a busy machine slows
  the input instead of dropping); SIGTERM after 1 s. Checks: exit 0 within
  2 s of the signal; the stats JSON is written; the output pcap is complete
  (every record whole) and is exactly the input sequence repeated, in order;
  output == ports.p1.tx == totals.tx == totals.rx (no drop: rx stopped first,
  the rings drained); nothing in flight or unaccounted, mempool back to zero.
sigpending: graceful, with pipefwd's RLIMIT_SIGPENDING at 0 (prlimit), so no
  real-time signal can be queued to it: at exit DPDK 22.11 cancels its
  rte_mp_handle thread (a cancel is such a signal) and waits for it, which
  never ended (CI saw it when another test's signal storm filled root's
  queue). pipefwd must exit 0 all the same, within 2 s plus its 10 s bound
  on EAL's cleanup, saying why; graceful itself must not say it.
force: a stalled `delay` stage (0.5 s per burst) keeps the rings from
  draining, so a graceful stop would wait for its 2 s deadline; a second
  SIGTERM 0.3 s after the first must end the process at once (exit 143).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import (EAL, Pipefwd, Scratch, args_parser, check_common, expect_eq,  # noqa: E402
                      finish, flows_input, frame, load_stats, read_pcap, signal, write_pcap)

N = 2000

GRACEFUL = """# sigterm fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/p0.pcap,infinite_rx=1" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/out.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0], pace_pps: 50000, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 16384, burst: 32 }}
runtime: {{ backpressure: true }}
lcores:
  1: [rx, xc]
  2: [tx]
"""

FORCE = """# second-sigterm fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/p0.pcap" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/out.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0], next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: slow }}
  slow: {{ type: delay, us: 500000, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 4096, burst: 32 }}
lcores:
  1: [rx, xc]
  2: [slow, tx]
"""


# EAL's cleanup bound at exit (PF_EAL_CLEANUP_MAX_S, app/main.c) and its log line.
CLEANUP_MAX_S = 10
CLEANUP_LINE = "EAL cleanup did not finish"


def graceful(args, sc, errors, no_sigpending=False):
    flows_input(sc.path("in.pcap"), N)
    inp = [frame(i % 8, i // 8) for i in range(N)]
    topo = sc.path("topology.yaml")
    with open(topo, "w") as f:
        f.write(GRACEFUL.format(eal=EAL, d=sc.dir))
    stats = sc.path("stats.json")
    wrap = ["prlimit", "--sigpending=0"] if no_sigpending else []
    pf = Pipefwd(args.pipefwd, topo, stats, prefix="sigterm", wrap=wrap)
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start")
    time.sleep(1.0)
    t0 = time.time()
    pf.signal(signal.SIGTERM)
    rc = pf.wait(timeout=30)
    dt = time.time() - t0
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    limit = 2.0 + (CLEANUP_MAX_S if no_sigpending else 0)
    if dt > limit:
        errors.append(f"exit took {dt:.2f} s after SIGTERM (limit {limit:.0f} s)")
    said = "".join(pf.log).count(CLEANUP_LINE)
    if no_sigpending and said != 1:
        errors.append(f"no queued signal possible: want one '{CLEANUP_LINE}' line, got {said}")
    if not no_sigpending and said != 0:
        errors.append(f"'{CLEANUP_LINE}' on a plain exit: {pf.stderr()[-1000:]}")
    if no_sigpending:
        pf.cleanup_runtime_dir()    # the bound exits without EAL's cleanup
    st = load_stats(stats, errors)
    if st is None:
        return "no stats"
    try:
        out = read_pcap(sc.path("out.pcap"))
    except ValueError as e:
        errors.append(f"output pcap incomplete: {e}")
        out = []
    tot = st["totals"]
    expect_eq(errors, "output frames", len(out), st["ports"]["p1"]["tx"])
    expect_eq(errors, "totals.tx", tot["tx"], len(out))
    expect_eq(errors, "totals.rx (nothing dropped at shutdown)", tot["rx"], len(out))
    expect_eq(errors, "totals.dropped", tot["dropped"], 0)
    if len(out) < 1000:
        errors.append(f"only {len(out)} frames forwarded in 1 s")
    bad = next((i for i, d in enumerate(out) if d != inp[i % N]), None)
    if bad is not None:
        errors.append(f"output frame {bad} is not input frame {bad % N} (lost or reordered)")
    check_common(st, errors)
    return f"{len(out)} frames ({len(out) / N:.1f} loops of the file), exit {rc} in {dt:.2f} s"


def force(args, sc, errors):
    flows_input(sc.path("in.pcap"), N)
    topo = sc.path("topology.yaml")
    with open(topo, "w") as f:
        f.write(FORCE.format(eal=EAL, d=sc.dir))
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, prefix="sigterm2")
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start")
    time.sleep(0.5)
    pf.signal(signal.SIGTERM)
    time.sleep(0.3)
    if pf.proc.poll() is not None:
        errors.append(f"exited {pf.proc.returncode} before the second SIGTERM: the stall "
                      "did not hold the graceful stop")
    t0 = time.time()
    pf.signal(signal.SIGTERM)
    rc = pf.wait(timeout=30)
    dt = time.time() - t0
    pf.cleanup_runtime_dir()
    expect_eq(errors, "exit status after the second SIGTERM", rc, 128 + signal.SIGTERM)
    if dt > 0.5:
        errors.append(f"second SIGTERM took {dt:.2f} s to end the process")
    return f"forced exit {rc} {dt * 1000:.0f} ms after the second SIGTERM"


def main():
    ap = args_parser(__doc__)
    ap.add_argument("--mode", choices=["graceful", "sigpending", "force"], default="graceful")
    args = ap.parse_args()
    sc = Scratch(f"sigterm-{args.mode}")
    write_pcap(sc.path("empty.pcap"), [])
    errors = []
    if args.mode == "force":
        summary = force(args, sc, errors)
    else:
        summary = graceful(args, sc, errors, no_sigpending=args.mode == "sigpending")
    finish(f"sigterm {args.mode}", sc, errors, summary)


if __name__ == "__main__":
    main()
