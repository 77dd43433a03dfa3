"""VLAN domain: untagged traffic on p0 and p1 is domain lan; VLAN 10 on p0 and
p2 is domain v10. Frames keep their tag. VID 0 (priority tag) counts as
untagged. A VLAN no domain has on that port (20 on p0, 10 on p1), or
untagged traffic on p2 (tagged-only), is dropped with l2_no_domain."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import udp4, BCAST, MAC_A, MAC_B, MAC_C  # noqa: E402

PORTS = ["p0", "p1", "p2"]


def bridge():
    return Bridge([("lan", 0, ["p0", "p1"]), ("v10", 10, ["p0", "p2"])])


def inputs():
    return {
        "p0": [udp4(MAC_A, BCAST, sport=1), udp4(MAC_A, BCAST, sport=2, vlan=10),
               udp4(MAC_A, BCAST, sport=3, vlan=20), udp4(MAC_A, BCAST, sport=4, vlan=0)],
        "p1": [udp4(MAC_B, MAC_A, sport=5), udp4(MAC_B, BCAST, sport=6, vlan=10)],
        "p2": [udp4(MAC_C, MAC_A, sport=7, vlan=10), udp4(MAC_C, MAC_B, sport=8, vlan=10),
               udp4(MAC_C, MAC_A, sport=9)],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
