"""Fragments and malformed L4 (reliability.md cases 29, 36, 37).
A non-first fragment has no ports: a rule that names ports does not match it,
a rule with full port ranges does; the first fragment has its ports. A
truncated UDP or TCP header, or a TCP data offset under 5 (or past the end),
never matches a port rule. Zero-length UDP (8 bytes) is an ordinary packet."""
import os

import acl_model
from replaylib import IP, TCP, UDP, Ether, Raw, MAC_A, MAC_B, tcp4

HERE = os.path.dirname(os.path.abspath(__file__))


def ip(src, proto, payload, **kw):
    return Ether(src=MAC_A, dst=MAC_B) / IP(src=src, dst="10.0.1.1", proto=proto, **kw) / payload


def inputs():
    udp53 = UDP(sport=1000, dport=53) / Raw(b"q" * 24)
    p0 = [
        ip("10.0.0.1", 17, udp53, flags="MF", id=7),                        # first: rule 1
        ip("10.0.0.1", 17, Raw(b"f" * 16), frag=3, id=7),                  # non-first: rule 3
        ip("11.0.0.1", 17, Raw(b"f" * 16), frag=3, id=8),                  # non-first: default
        ip("11.0.0.1", 6, Raw(b"f" * 16), frag=3, id=9),                   # tcp non-first: default
        tcp4(src="11.0.0.1", dport=80),                                    # rule 2
        ip("11.0.0.1", 6, TCP(sport=1, dport=80, dataofs=4)),              # doff 4: default
        ip("11.0.0.1", 6, TCP(sport=1, dport=80, dataofs=15)),             # doff past end
        ip("11.0.0.1", 6, Raw(bytes([0, 1, 0, 80]) + b"\0" * 6)),           # 10-byte TCP
        ip("10.0.0.1", 17, Raw(bytes([3, 232, 0, 53]))),                   # 4-byte UDP: rule 3
        ip("10.0.0.1", 17, UDP(sport=1000, dport=53)),                     # empty UDP: rule 1
        ip("10.0.0.1", 17, UDP(sport=1000, dport=54)),                     # empty UDP: rule 3
    ]
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
