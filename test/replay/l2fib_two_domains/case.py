"""Two domains: red = {p0, p1}, blue = {p2, p3}. Broadcasts and unknown
unicast stay inside their domain; the same MAC in both domains is two
stations (no mac_move); a MAC known in red is still unknown in blue."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import udp4, BCAST, MAC_A, MAC_B  # noqa: E402

PORTS = ["p0", "p1", "p2", "p3"]


def bridge():
    return Bridge([("red", 0, ["p0", "p1"]), ("blue", 0, ["p2", "p3"])])


def inputs():
    return {
        "p0": [udp4(MAC_A, BCAST, sport=1)],
        "p1": [udp4(MAC_B, MAC_A, sport=2), udp4(MAC_B, BCAST, sport=3)],
        "p2": [udp4(MAC_A, BCAST, sport=4), udp4(MAC_A, MAC_B, sport=5)],
        "p3": [udp4(MAC_B, MAC_A, sport=6)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
