"""Broadcast flood: ARP requests and IPv4 frames to ff:ff:ff:ff:ff:ff go to
every other port of the domain; the senders are learned, so the ARP replies
(unicast) go back to one port only."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import ARP, Ether, udp4, BCAST, MAC_A, MAC_B, MAC_C  # noqa: E402

PORTS = ["p0", "p1", "p2", "p3"]


def bridge():
    return Bridge([("default", 0, PORTS)])


def arp(src, dst, op, psrc, pdst):
    return Ether(src=src, dst=dst) / ARP(op=op, hwsrc=src, psrc=psrc, pdst=pdst,
                                         hwdst=dst if op == 2 else "00:00:00:00:00:00")


def inputs():
    return {
        "p0": [arp(MAC_A, BCAST, 1, "10.0.0.1", "10.0.0.2"),
               udp4(MAC_A, BCAST, dst="10.0.0.255", sport=7)],
        "p1": [arp(MAC_B, MAC_A, 2, "10.0.0.2", "10.0.0.1"),
               arp(MAC_B, BCAST, 1, "10.0.0.2", "10.0.0.3")],
        "p3": [arp(MAC_C, MAC_B, 2, "10.0.0.3", "10.0.0.2")],
    }


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs())
