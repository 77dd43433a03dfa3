"""Same-port drop: A and B both sit behind p0 (a hub or a downstream switch);
frames between them arrive on p0 and must not be sent anywhere
(l2_same_port). C on p1 still reaches both on p0."""
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
        "p0": [udp4(MAC_A, BCAST, sport=1)] +
              [udp4(MAC_B, MAC_A, sport=2 + i) for i in range(4)] +
              [udp4(MAC_A, MAC_B, sport=9)],
        "p1": [udp4(MAC_C, MAC_A, sport=10), udp4(MAC_C, MAC_B, sport=11)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
