"""Unknown unicast: frames to MACs nobody has sent from are flooded to every
port of the domain except the ingress port, one reference-counted copy each."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import udp4, MAC_A, MAC_B  # noqa: E402

PORTS = ["p0", "p1", "p2", "p3"]


def bridge():
    return Bridge([("default", 0, PORTS)])


def inputs():
    return {
        "p0": [udp4(MAC_A, "02:00:00:00:99:%02x" % i, sport=i) for i in range(5)],
        "p2": [udp4(MAC_B, "02:00:00:00:98:%02x" % i, sport=i) for i in range(3)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
