"""Multicast flood: IPv4 (01:00:5e) and IPv6 (33:33) group destinations are
flooded even when the group MAC was never a source; STP BPDUs, LACP and
PAUSE (01:80:c2:00:00:00/02/01) are never forwarded (l2_reserved_dst), and a
source seen only in such frames is not learned. 01:80:c2:00:00:10 is outside
the reserved block and is flooded."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import Ether, IP, IPv6, UDP, Raw, udp4, MAC_A, MAC_B  # noqa: E402
from scapy.all import Dot3, LLC, STP  # noqa: E402

PORTS = ["p0", "p1", "p2"]
MAC_S = "02:00:00:00:00:5a"


def bridge():
    return Bridge([("default", 0, PORTS)])


def inputs():
    return {
        "p0": [udp4(MAC_A, "01:00:5e:00:00:fb", dst="224.0.0.251", sport=5353, dport=5353),
               Ether(src=MAC_A, dst="33:33:00:00:00:01") / IPv6(src="fe80::1", dst="ff02::1") /
               UDP(sport=1, dport=2) / Raw(b"mcast6"),
               Dot3(src=MAC_S, dst="01:80:c2:00:00:00") / LLC() / STP(),
               Ether(src=MAC_S, dst="01:80:c2:00:00:02", type=0x8809) / Raw(b"\x01" * 50),
               Ether(src=MAC_S, dst="01:80:c2:00:00:01", type=0x8808) / Raw(b"\x00\x01" * 23),
               Ether(src=MAC_A, dst="01:80:c2:00:00:10", type=0x88B5) / Raw(b"x" * 46)],
        "p1": [udp4(MAC_B, MAC_S, sport=3), udp4(MAC_B, "01:00:5e:00:00:01", dst="224.0.0.1")],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
