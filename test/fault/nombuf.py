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
    (faultlib.check_recovery); no crash, nothing unaccounted, mempool back to zero, exit 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import (args_parser, check_common, check_flow_order, expect_eq, finish,  # noqa: E402
                      check_recovery, read_pcap, run_stall)

N = 40000
PPS = 25000          # a ring or pool of 4096 lasts 164 ms of a stalled consumer
STALL_US = 20000
POOL = 4096

def main():
    args = args_parser(__doc__).parse_args()
    sc, errors, keys, pf, st = run_stall(args.pipefwd, "nombuf", N, 8192, PPS, STALL_US,
                                         env={"PIPEFWD_FAULT_MBUFS": str(POOL)},
                                         onset="port p0: mempool empty")
    if "PIPEFWD_FAULT_MBUFS" not in pf.stderr():
        errors.append("the fault hook did not take effect")
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
    last = check_recovery(keys, out, errors, "nombuf")
    check_common(st, errors)
    finish("nombuf", sc, errors,
           f"pool {POOL}: rx_nombuf {p0['rx_nombuf']} + rx {tot['rx']} = {N}, "
           f"last loss at frame {last}, recovered, {st['seconds']:.2f} s")


if __name__ == "__main__":
    main()
