"""Static precedence: A is pinned to p1 and C to p2 by static.macs. A frame
from A arriving on p0 neither moves nor relearns A (static_src_mismatch);
traffic to A still goes to p1. With age_s 10 and the pcap clock, learned B
ages out by t=100 while the static entries keep forwarding."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import timed, udp4, BCAST, MAC_A, MAC_B, MAC_C, MAC_D  # noqa: E402

PORTS = ["p0", "p1", "p2"]


def bridge():
    return Bridge([("default", 0, PORTS)], age_s=10, timed=True,
                  static=[(MAC_A, "p1", "default"), (MAC_C, "p2", "default")])


def inputs():
    return {
        "p0": [timed(udp4(MAC_B, MAC_A, sport=1), 0), timed(udp4(MAC_A, BCAST, sport=2), 1),
               timed(udp4(MAC_B, MAC_A, sport=3), 2), timed(udp4(MAC_B, MAC_C, sport=4), 3)],
        "p1": [timed(udp4(MAC_D, MAC_B, sport=5), 5)],
        "p2": [timed(udp4(MAC_D, MAC_A, sport=6), 100), timed(udp4(MAC_D, MAC_B, sport=7), 101)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
