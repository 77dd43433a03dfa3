"""Learn then forward: A on p0 talks to unknown B (flooded to p1 and p2, A
learned on p0); B answers from p1 and goes to p0 only (B learned on p1); C
on p2 reaches B on p1 only."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import udp4, MAC_A, MAC_B, MAC_C  # noqa: E402

PORTS = ["p0", "p1", "p2"]


def bridge():
    return Bridge([("default", 0, PORTS)])


def inputs():
    return {
        "p0": [udp4(MAC_A, MAC_B, sport=1)],
        "p1": [udp4(MAC_B, MAC_A, sport=2 + i) for i in range(3)],
        "p2": [udp4(MAC_C, MAC_B, sport=9), udp4(MAC_C, MAC_A, sport=10)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
