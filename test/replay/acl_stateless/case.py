"""Stateless ACL: permit, deny, the default action (deny), port ranges at their
edges, and priority order (an explicit priority beats list order; equal
priorities keep list order). Expected output and counters from scripts/acl_model.py."""
import os

import acl_model
from replaylib import ICMP, IP, Ether, MAC_A, MAC_B, tcp4, udp4

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    p0 = [udp4(src="10.0.0.1", sport=5000 + d, dport=d) for d in (999, 1000, 1500, 2000, 2001)]
    p0 += [udp4(src="10.0.0.66", dport=1500)]                        # rule 1
    p0 += [tcp4(sport=0, dport=65535), tcp4(sport=1, dport=65535), tcp4(sport=0, dport=65534)]
    p0 += [udp4(src="10.0.9.9", dport=1500), udp4(src="10.0.8.1", dport=1500)]
    p0 += [Ether(src=MAC_A, dst=MAC_B) / IP(src="10.0.0.1", dst="10.0.1.1") / ICMP()]
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
