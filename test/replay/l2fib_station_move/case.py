"""Station move: A is learned on p0 and B on p1 reaches it there; then A
shows up on p1 (mac_move), and C on p2 now reaches A on p1, not p0."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import udp4, BCAST, MAC_A, MAC_B, MAC_C  # noqa: E402

PORTS = ["p0", "p1", "p2"]


def bridge():
    return Bridge([("default", 0, PORTS)])


def inputs():
    return {
        "p0": [udp4(MAC_A, BCAST, sport=1)],
        "p1": [udp4(MAC_B, MAC_A, sport=2), udp4(MAC_A, BCAST, sport=3),
               udp4(MAC_A, MAC_B, sport=4)],
        "p2": [udp4(MAC_C, MAC_A, sport=5 + i) for i in range(3)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
