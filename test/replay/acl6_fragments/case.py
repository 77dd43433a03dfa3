"""IPv6 fragments and extension headers (with IPv4 fragments in the same
bursts). A non-first fragment (fragment header offset != 0) has no ports:
with nonfirst_fragments: protocol-only (the default) a port rule matches it
on protocol and addresses, as for IPv4; the first fragment has its ports.
Ports are read behind hop-by-hop and destination options headers. A
truncated UDP header or TCP data offset under 5 never matches a port rule.
Expected output and counters from scripts/acl_model.py, which walks the
extension headers itself."""
import os

import acl_model
from replaylib import IP, IPv6, TCP, UDP, Ether, Raw, MAC_A, MAC_B, udp6
from scapy.layers.inet6 import IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop

HERE = os.path.dirname(os.path.abspath(__file__))


def ip6(src, nh, payload, ext=()):
    l3 = IPv6(src=src, dst="2001:db8:1::1")
    for h in ext:
        l3 = l3 / h
    return Ether(src=MAC_A, dst=MAC_B) / l3 / payload


def frag(off, m, nh):
    return IPv6ExtHdrFragment(offset=off, m=m, id=7, nh=nh)


def inputs():
    udp53 = UDP(sport=1000, dport=53) / Raw(b"q" * 24)
    a, b = "2001:db8:a::1", "2001:db8:b::1"
    p0 = [
        ip6(a, 44, udp53, [frag(0, 1, 17)]),                                # first: rule 1
        ip6(a, 44, Raw(b"f" * 16), [frag(3, 1, 17)]),                       # non-first: rule 1
        ip6(b, 44, Raw(b"f" * 16), [frag(3, 0, 17)]),                       # non-first: rule 1
        ip6(b, 44, Raw(b"f" * 16), [frag(3, 0, 6)]),                        # tcp non-first: rule 2
        ip6(b, 44, Raw(b"f" * 16), [frag(3, 0, 50)]),                       # esp: default
        ip6(a, 17, UDP(sport=1, dport=54), [IPv6ExtHdrHopByHop()]),         # rule 3
        ip6(b, 17, UDP(sport=1, dport=53), [IPv6ExtHdrHopByHop(), IPv6ExtHdrDestOpt()]),
        ip6(b, 6, TCP(sport=1, dport=80), [IPv6ExtHdrDestOpt()]),           # rule 2
        ip6(b, 6, TCP(sport=1, dport=80, dataofs=4)),                       # doff 4: default
        Ether(src=MAC_A, dst=MAC_B) / IPv6(src=a, dst="2001:db8:1::1", nh=17) /
        Raw(bytes([3, 232, 0, 53])),                                        # 4-byte UDP: rule 3
        Ether(src=MAC_A, dst=MAC_B) / IP(src="10.0.0.1", dst="10.0.1.1", proto=17, frag=3, id=9) /
        Raw(b"f" * 16),                                                     # IPv4 non-first
        udp6(src=b, dst="2001:db8:1::1", dport=54),                         # default
    ]
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
