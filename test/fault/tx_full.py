#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: a TX queue that stays full (a net_ring peer that does not drain).

    /usr/bin/python3 test/fault/tx_full.py [--pipefwd build/app/pipefwd]

p1 is a net_ring port: what tx sends waits in its 1024-slot ring until
something reads the port. Its only reader, the `peer` rx stage, takes 2000
frames per second, so while 10000 frames are sent to p1 at 25 kpps its ring
is full almost all the time. p2 carries an independent flow at the same rate.
Checks:
  - every frame for p1 was either accepted by the ring or counted tx_full
    (ports.p1.tx + tx_full.p1 == input), with tx_full > 0;
  - bounded retries: where the PMD counts refused frames (oerrors; 22.11's
    net_ring does not), at most 17 attempts per frame it refused (one try plus
    16 retries without progress); the run's length bounds them anyway;
  - no head-of-line blocking: p2 got all its frames, in order, tx_full.p2 == 0;
  - the peer got exactly what the ring accepted (so the ring is empty at stop),
    nothing unaccounted, mempool back to zero, exit 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import (EAL, Pipefwd, Scratch, args_parser, check_common, check_flow_order,  # noqa: E402
                      expect_eq, finish, flows_input, load_stats, read_pcap, write_pcap)

N = 10000
PPS = 50000          # over both inputs

TOPO = """# tx_full fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in0.pcap,tx_pcap={d}/p0.pcap" }}
  p1: {{ device: "net_ring0" }}
  p2: {{ device: "net_pcap1,rx_pcap={d}/in2.pcap,tx_pcap={d}/out2.pcap" }}
  p3: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0, p2], pace_pps: {pps}, next: xc }}
  peer: {{ type: rx, ports: [p1], pace_pps: 2000, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1, p2: p2, p1: p3 }}, next: tx }}
  tx: {{ type: tx, ports: [p1, p2, p3] }}
lcores:
  1: [rx, xc, tx]
  2: [peer]
"""


def main():
    args = args_parser(__doc__).parse_args()
    sc = Scratch("tx_full")
    errors = []
    flows_input(sc.path("in0.pcap"), N)
    flows_input(sc.path("in2.pcap"), N, flows=4)
    topo = sc.path("topology.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL, d=sc.dir, pps=PPS))
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, args=["-i", "700"], prefix="tx_full")
    rc = pf.wait(timeout=90)
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    st = load_stats(stats, errors)
    if st is None:
        finish("tx_full", sc, errors, "no stats")
    ports = st["ports"]
    tx = st["stages"]["tx"]
    full_p1 = tx["gauges"]["tx_full.p1"]
    expect_eq(errors, "ports.p1.tx + tx_full.p1", ports["p1"]["tx"] + full_p1, N)
    if full_p1 == 0:
        errors.append("no tx_full on p1: the ring never filled")
    if ports["p1"]["tx"] < 1023:
        errors.append(f"only {ports['p1']['tx']} frames entered p1's 1023-frame ring")
    if ports["p1"]["oerrors"] > 17 * full_p1:
        errors.append(f"p1 oerrors {ports['p1']['oerrors']} > 17 x tx_full {full_p1}: "
                      "unbounded retries")
    expect_eq(errors, "tx.drops.tx_full", tx["drops"]["tx_full"], full_p1)
    expect_eq(errors, "tx_full.p2", tx["gauges"]["tx_full.p2"], 0)
    expect_eq(errors, "totals.dropped", st["totals"]["dropped"], full_p1)
    out2 = read_pcap(sc.path("out2.pcap"))
    expect_eq(errors, "p2 output frames (no head-of-line blocking)", len(out2), N)
    check_flow_order(out2, errors, "p2")
    expect_eq(errors, "peer rx (ports.p1.rx) == ports.p1.tx", ports["p1"]["rx"], ports["p1"]["tx"])
    expect_eq(errors, "ports.p3.tx", ports["p3"]["tx"], ports["p1"]["rx"])
    expect_eq(errors, "totals.rx", st["totals"]["rx"], 2 * N + ports["p1"]["rx"])
    check_common(st, errors)
    finish("tx_full", sc, errors,
           f"p1: {ports['p1']['tx']} sent, tx_full {full_p1} (oerrors {ports['p1']['oerrors']}); "
           f"p2: {len(out2)}/{N} delivered; {st['seconds']:.2f} s")


if __name__ == "__main__":
    main()
