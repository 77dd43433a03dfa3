#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: inter-stage ring full behind a stalled consumer; the producer never blocks.

    /usr/bin/python3 test/fault/ring_full.py [--lossless] [--pipefwd build/app/pipefwd-test]

rx (paced, 25 kpps) -> xc -> [ring of 4096] -> slow (delay stage) -> tx -> p1.
`slow` busy-waits 20 ms per burst (about 1.6 kpps), so the ring fills and xc
drops the overflow as ring_full. Mid-stream a reload sets `us: 0` (the stall
ends) and the rest of the stream must flow without a drop: recovery without
restart. Checks, all exact:
  - rx read every frame of the file and the ring overflowed (the producer
    kept running instead of waiting for the stalled consumer);
  - pipefwd logged the full ring (a counter and a log line);
  - ring enqueued + ring_full == what xc sent on that edge; ring_full on the
    ring == ring_full on xc == totals.dropped == input - output;
  - the output is exactly the enqueued frames, per-flow in order, and the
    second half of the input got through (recovery: faultlib.check_recovery);
  - nothing unaccounted or in flight, mempool back to zero, exit 0.
--lossless: a longer stall (400 ms a burst for 1.5 s, ring of 1024) with
runtime.backpressure: the ring fills, rx then takes only what it holds, and
every frame comes out, in order, with no drop at all; rx held back longer
than the idle exit (-i 300) does not stop the replay.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import (args_parser, check_common, check_flow_order, expect_eq, finish,  # noqa: E402
                      check_recovery, read_pcap, run_stall)

N = 40000
PPS = 25000          # a ring or pool of 4096 lasts 164 ms of a stalled consumer
STALL_US = 20000

def lossless(args):
    """The same stall with runtime.backpressure: the producer takes only what
    the ring holds, so nothing is dropped and every frame comes out in order."""
    # 400 ms a burst for 1.5 s: rx is held back by the full ring longer
    # than the idle exit (-i 300) between the consumer's bursts. A held
    # source is not a quiet one: counted idle, this replay stopped at 32364
    # of 40000 frames on a loaded machine (and here at once).
    sc, errors, keys, pf, st = run_stall(args.pipefwd, "ring_full_lossless", N, 1024, PPS,
                                         400000, lossless=True, stall_s=1.5)
    if st is None:
        finish("ring_full lossless", sc, errors, "no stats")
    out = read_pcap(sc.path("out.pcap"))
    ring = st["rings"]["xc->slow"]
    tot = st["totals"]
    expect_eq(errors, "totals.rx (the whole file, later)", tot["rx"], N)
    expect_eq(errors, "ring_full", ring["ring_full"], 0)
    expect_eq(errors, "totals.dropped", tot["dropped"], 0)
    expect_eq(errors, "output frames", len(out), N)
    expect_eq(errors, "ring enqueued", ring["enqueued"], N)
    if ring["hwm"] < 1023:
        errors.append(f"ring hwm {ring['hwm']}: the stall never filled the ring")
    # rx -> xc share lcore 1: that edge goes direct.
    expect_eq(errors, "rx->xc direct", st["rings"]["rx->xc"]["direct"], N)
    check_flow_order(out, errors)
    check_common(st, errors)
    finish("ring_full lossless", sc, errors,
           f"{N} frames, all forwarded in order, ring hwm {ring['hwm']}, no drop, "
           f"{st['seconds']:.2f} s")


def main():
    ap = args_parser(__doc__)
    ap.add_argument("--lossless", action="store_true",
                    help="runtime.backpressure: the stall slows the input, nothing is dropped")
    args = ap.parse_args()
    if args.lossless:
        lossless(args)
    sc, errors, keys, pf, st = run_stall(args.pipefwd, "ring_full", N, 4096, PPS, STALL_US,
                                         onset="ring xc->slow full")
    if st is None:
        finish("ring_full", sc, errors, "no stats")
    out = read_pcap(sc.path("out.pcap"))
    ring = st["rings"]["xc->slow"]
    xc = st["stages"]["xc"]
    tot = st["totals"]
    expect_eq(errors, "totals.rx (producer read the whole file)", tot["rx"], N)
    expect_eq(errors, "xc.packets", xc["packets"], N)
    expect_eq(errors, "ring enqueued + ring_full", ring["enqueued"] + ring["ring_full"],
              xc["edges"]["out"])
    expect_eq(errors, "xc.drops.ring_full", xc["drops"]["ring_full"], ring["ring_full"])
    expect_eq(errors, "totals.dropped", tot["dropped"], ring["ring_full"])
    expect_eq(errors, "output frames", len(out), ring["enqueued"])
    expect_eq(errors, "ports.p1.tx", st["ports"]["p1"]["tx"], len(out))
    expect_eq(errors, "overflow: input - output", N - len(out), ring["ring_full"])
    if ring["ring_full"] == 0:
        errors.append("no ring_full: the stall did not fill the ring")
    # The producer never waited for the consumer: a producer that blocked on
    # the full ring would have dropped nothing (ring_full 0, checked above)
    # and rx would not have read the whole file while the stall lasted. No
    # wall-clock bound: on a busy machine the run's length says nothing.
    check_flow_order(out, errors)
    last_drop = check_recovery(keys, out, errors, "ring_full")
    expect_eq(errors, "reload.generation", st["reload"]["generation"], 1)
    check_common(st, errors)
    finish("ring_full", sc, errors,
           f"{N} frames, ring_full {ring['ring_full']} (= input - output), hwm {ring['hwm']}, "
           f"last drop at frame {last_drop}, recovered after the reload, {st['seconds']:.2f} s")


if __name__ == "__main__":
    main()
