"""Stateful IPv6 ACL: permit-reflect opens a session for the flow, both
directions; the replies pass without a rule lookup (session_permit), also
in the same burst as the packet that opened the session; a reply before the
outbound packet, another port, and a TCP reply to another host are denied.
An IPv4 flow shares the bursts and the table. ICMPv6 echo: sessions on the
address pair. Expected output and counters from scripts/acl_model.py."""
import os

import acl_model
from replaylib import IPv6, Ether, MAC_A, MAC_B, tcp6, udp4, udp6
from scapy.layers.inet6 import ICMPv6EchoReply, ICMPv6EchoRequest

HERE = os.path.dirname(os.path.abspath(__file__))
IN, OUT = "2001:db8:a::1", "2001:db8:ff::53"


def echo(src, dst, reply=False):
    return (Ether(src=MAC_A, dst=MAC_B) / IPv6(src=src, dst=dst) /
            (ICMPv6EchoReply() if reply else ICMPv6EchoRequest()))


def inputs():
    p0 = [udp6(src=OUT, dst=IN, sport=53, dport=4000)]                  # no session yet
    p0 += [udp6(src=IN, dst=OUT, sport=4000, dport=53)]                 # opens it
    p0 += [udp6(src=OUT, dst=IN, sport=53, dport=4000, payload=bytes([i]) * 20) for i in range(3)]
    p0 += [udp6(src=OUT, dst=IN, sport=53, dport=4001)]                 # other flow
    p0 += [udp4(src="8.8.8.8", dst="10.0.0.1", sport=53, dport=4000)]   # IPv4: no session
    p0 += [udp4(src="10.0.0.1", dst="8.8.8.8", sport=4000, dport=53),
           udp4(src="8.8.8.8", dst="10.0.0.1", sport=53, dport=4000)]
    c, s = "2001:db8:a::2", "2001:db8:1::80"
    p0 += [tcp6(src=c, dst=s, sport=1234, dport=80, flags="S"),
           tcp6(src=s, dst=c, sport=80, dport=1234, flags="SA"),
           tcp6(src=c, dst=s, sport=1234, dport=80, flags="A"),
           tcp6(src=s, dst=c, sport=80, dport=1234, flags="PA", payload=b"hello"),
           tcp6(src=c, dst=s, sport=1234, dport=80, flags="FA"),
           tcp6(src=s, dst=c, sport=80, dport=1234, flags="FA"),
           tcp6(src=s, dst="2001:db8:a::3", sport=80, dport=1234, flags="SA"),   # no session
           tcp6(src=c, dst=s, sport=1235, dport=81, flags="S")]                  # default
    p0 += [echo(OUT, IN, reply=True), echo(IN, OUT), echo(OUT, IN, reply=True)]
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
COUNTERS["acl.sessions"] = 4
