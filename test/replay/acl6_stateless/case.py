"""Stateless IPv6 ACL, IPv4 and IPv6 in the same bursts: IPv6 prefixes from
/32 to /128 on source and destination, port ranges at their edges, a deny
with a higher priority over a later permit, rules that name no address
matching both families, IPv4 rules (10.0.0.0/8, even 0.0.0.0/0) never
matching IPv6, ICMPv6 by protocol. Expected output and counters from
scripts/acl_model.py (which reads the rules as text, with Python's ipaddress)."""
import os

import acl_model
from replaylib import ICMP, IP, IPv6, Ether, MAC_A, MAC_B, tcp4, tcp6, udp4, udp6
from scapy.layers.inet6 import ICMPv6EchoRequest

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    p0 = [udp6(src="2001:db8:bad::1", dst="2001:db8:1::9", dport=1500)]       # rule 1
    p0 += [udp6(dst="2001:db8:1::9", dport=d) for d in (999, 1000, 2000, 2001)]
    p0 += [udp6(src="2001:db9::1", dst="2001:db8:1::9", dport=1500)]          # outside /32
    p0 += [udp6(dst="2001:db8:1:0:ffff::1", dport=1500)]                     # in the /64
    p0 += [udp6(dst="2001:db8:1:1::1", dport=1500)]                          # next /64
    p0 += [udp6(dst="2001:db8:2::53", dport=53), udp6(dst="2001:db8:2::54", dport=53)]
    p0 += [tcp6(dst="2001:db8:3::1", dport=22), tcp6(dst="2001:db8:3:1::1", dport=22)]
    p0 += [tcp6(dport=1023), tcp6(dport=1024), tcp4(dport=80)]               # no family
    p0 += [udp4(src="10.0.0.1"), udp6(src="a00::1", dst="2001:db8:5::1")]    # IPv4 rule only
    p0 += [Ether(src=MAC_A, dst=MAC_B) / IP(src="10.0.0.1", dst="10.0.1.1") / ICMP()]
    p0 += [Ether(src=MAC_A, dst=MAC_B) / IPv6(src="2001:db8::1", dst=d) / ICMPv6EchoRequest()
           for d in ("2001:db8:4::1", "2001:db8:4::2")]
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
