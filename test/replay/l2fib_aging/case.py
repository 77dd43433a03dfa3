"""Aging with the pcap clock (age_s 10, whole seconds): everything enters on
p0 so the times are in order. A (learned at 0, refreshed at 9) is still
known at 15, so X2 -> A is a same-port drop; at 30 A has aged and Y -> A is
flooded; A is learned again at 31. X (5) and X2 (15) age by the end (31)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import timed, udp4, BCAST, MAC_A  # noqa: E402

PORTS = ["p0", "p1", "p2"]
X, X2, Y, Z = "02:00:00:00:01:01", "02:00:00:00:01:02", "02:00:00:00:01:03", "02:00:00:00:01:04"


def bridge():
    return Bridge([("default", 0, PORTS)], age_s=10, timed=True)


def inputs():
    return {"p0": [timed(udp4(MAC_A, BCAST, sport=1), 0),
                   timed(udp4(X, MAC_A, sport=2), 5),
                   timed(udp4(MAC_A, Z, sport=3), 9),
                   timed(udp4(X2, MAC_A, sport=4), 15.5),
                   timed(udp4(Y, MAC_A, sport=5), 30),
                   timed(udp4(MAC_A, BCAST, sport=6), 31)]}


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
