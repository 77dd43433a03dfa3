#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: mbuf pool exhaustion under a traffic burst, and recovery.

    /usr/bin/python3 test/fault/nombuf.py [--pipefwd build/app/pipefwd]

The pool is forced down to 4096 mbufs (PIPEFWD_FAULT_MBUFS, a test-only hook:
the topology check never allows a pool this small) while a stalled `delay`
stage holds everything rx reads in an 8192-slot ring: the pool runs dry and
net_pcap fails to allocate, counting rx_nombuf (one lost frame each). A
reload then ends the stall (`us: 0`) and the pool recovers. Checks:
  - rx_nombuf > 0 and I4 exact at the port: frames in the file ==
    pipefwd rx + rx_nombuf (nothing else lost);
  - no ring_full (the pool ran out first), no drop at all inside pipefwd:
    output == pipefwd rx, per-flow in order;
  - recovery without restart: the second half of the input got through
    completely; no crash, nothing unaccounted, mempool back to zero, exit 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import (EAL, Pipefwd, Scratch, args_parser, check_common, check_flow_order,  # noqa: E402
                      expect_eq, finish, flows_input, flow_seq, load_stats, read_pcap, signal,
                      write_pcap)

N = 80000
PPS = 50000
STALL_US = 20000
POOL = 4096

TOPO = """# nombuf fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/p0.pcap" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/out.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0], pace_pps: {pps}, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: slow }}
  slow: {{ type: delay, us: {us}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 1024, burst: 32 }}
  xc->slow: {{ size: 8192 }}
lcores:
  1: [rx, xc]
  2: [slow, tx]
"""


def main():
    args = args_parser(__doc__).parse_args()
    sc = Scratch("nombuf")
    errors = []
    keys = flows_input(sc.path("in.pcap"), N)
    write_pcap(sc.path("empty.pcap"), [])
    topo = sc.path("topology.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL, d=sc.dir, pps=PPS, us=STALL_US))
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, args=["-i", "300"], prefix="nombuf",
                 env={"PIPEFWD_FAULT_MBUFS": str(POOL)})
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start")
    else:
        pf.wait_log("no such line", timeout=0.5)           # exhaustion phase
        with open(topo + ".tmp", "w") as f:
            f.write(TOPO.format(eal=EAL, d=sc.dir, pps=PPS, us=0))
        os.replace(topo + ".tmp", topo)
        pf.signal(signal.SIGHUP)
        if pf.wait_log(" applied in ", timeout=10) is None:
            errors.append("reload (us: 0) not applied")
    rc = pf.wait(timeout=60)
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    if "PIPEFWD_FAULT_MBUFS" not in pf.stderr():
        errors.append("the fault hook did not take effect")
    st = load_stats(stats, errors)
    if st is None:
        finish("nombuf", sc, errors, "no stats")
    p0 = st["ports"]["p0"]
    tot = st["totals"]
    out = read_pcap(sc.path("out.pcap"))
    if p0["rx_nombuf"] == 0:
        errors.append("rx_nombuf is 0: the pool never ran dry")
    expect_eq(errors, "I4: pipefwd rx + rx_nombuf", tot["rx"] + p0["rx_nombuf"], N)
    expect_eq(errors, "ring_full", st["rings"]["xc->slow"]["ring_full"], 0)
    expect_eq(errors, "totals.dropped", tot["dropped"], 0)
    expect_eq(errors, "output frames", len(out), tot["rx"])
    check_flow_order(out, errors)
    delivered = {flow_seq(d) for d in out}
    lost = [i for i, k in enumerate(keys) if k not in delivered]
    last = lost[-1] if lost else -1
    if last >= N // 2:
        errors.append(f"frame {last} of {N} lost: no recovery after the stall ended")
    check_common(st, errors)
    finish("nombuf", sc, errors,
           f"pool {POOL}: rx_nombuf {p0['rx_nombuf']} + rx {tot['rx']} = {N}, "
           f"last loss at frame {last}, recovered, {st['seconds']:.2f} s")


if __name__ == "__main__":
    main()
