"""Own MAC as source (reliability.md case 8): a frame arriving with one of
the ports' own MACs as its source is a spoof or our own frame looped back.
rx drops it (rx.l2_src_is_own_mac), whatever it carries, so the bridge never
learns it: a later frame to that MAC is unknown unicast and floods. A
station whose MAC merely ends in the same byte is an ordinary station."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import raw_bytes, udp4, BCAST, MAC_A, MAC_B, MAC_C  # noqa: E402

PORTS = ["p0", "p1", "p2"]
OWN = {"p0": "02:00:00:00:00:f0", "p1": "02:00:00:00:01:f0", "p2": "02:00:00:00:02:f0"}
LOOKALIKE = "02:00:00:00:03:f0"     # same last byte as the own MACs


def bridge():
    return Bridge([("default", 0, PORTS)])


def inputs():
    return {
        "p0": [udp4(MAC_A, MAC_B, sport=1),                      # A learned, flooded
               udp4(OWN["p1"], BCAST, sport=2),                  # dropped by rx
               udp4(OWN["p0"], MAC_A, sport=3)],                 # dropped (own port's MAC)
        "p1": [udp4(OWN["p2"], MAC_A, sport=4),                  # dropped
               udp4(MAC_B, OWN["p0"], sport=5),                  # to our MAC: never learned, floods
               udp4(LOOKALIKE, MAC_A, sport=6)],                 # ordinary station, to A on p0
        "p2": [udp4(MAC_C, LOOKALIKE, sport=7),                  # to the look-alike on p1
               udp4(MAC_C, OWN["p1"], sport=8)],                 # floods too
    }


def own_src(pkt):
    return raw_bytes(pkt)[6:12] in {bytes(int(x, 16) for x in m.split(":")) for m in OWN.values()}


def bridged(inp):
    """What reaches the bridge: rx has dropped the own-MAC sources."""
    return {p: [k for k in pkts if not own_src(k)] for p, pkts in inp.items()}


def expected(inp):
    return run(bridge(), bridged(inp), PORTS)


_b = bridge()
run(_b, bridged(inputs()), PORTS)
_dropped = sum(1 for pkts in inputs().values() for k in pkts if own_src(k))
COUNTERS = counters(_b, bridged(inputs()), extra={"rx.l2_src_is_own_mac": _dropped})
COUNTERS["totals.rx"] += _dropped
