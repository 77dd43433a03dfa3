"""Neighbour resolution failing: ICMP Destination Unreachable, host (3/1).

p0 is 192.168.0.1/24 and its subnet the only route (connected; lpm has no
routes of its own). Host A sends to 192.168.0.66, which never answers.
Linux's timers: a broadcast request at once and one every retrans_time
(1 s) until 3 went out; at the next timer the entry FAILS and every held
packet is answered with 3/1 from 192.168.0.1 (the icmp stage's format:
TTL 64, tos 0xc0, ids from 0, quoting the header as received and 8 bytes),
except a held ICMP error (RFC 1812 4.3.2.7). Time moves with the packets
(clock: pcap): ARP requests for other hosts mark 1, 2 and 3 s. A packet
sent after the failure starts a new round (one request), and is still held
when pipefwd stops (dropped as neigh_hold_stopped)."""
import struct

from replaylib import Ether, ARP, IP, UDP, ICMP, Raw, BCAST, raw_bytes, timed
from scapy.utils import checksum

R0, R0_IP = "02:00:00:00:00:10", "192.168.0.1"
A, A_IP = "02:00:00:00:00:a1", "192.168.0.9"
C, C_IP = "02:00:00:00:00:c1", "192.168.0.7"
D_IP = "192.168.0.66"
ZERO = "00:00:00:00:00:00"


def udp(seq):
    return (Ether(src=A, dst=R0) / IP(src=A_IP, dst=D_IP, ttl=64) /
            UDP(sport=5000, dport=6000) / Raw(b"seq%04d" % seq))


ERR = (Ether(src=A, dst=R0) / IP(src=A_IP, dst=D_IP, ttl=64) /
       ICMP(type=3, code=3) / IP(src=D_IP, dst=A_IP) / UDP(sport=1, dport=2))
HELD = [udp(0), udp(1), udp(2), ERR]
LATE = udp(3)


def tick(t):
    return timed(Ether(src=C, dst=BCAST) /
                 ARP(op=1, hwsrc=C, psrc=C_IP, hwdst=ZERO, pdst="192.168.0.99"), t)


def request():
    return (Ether(src=R0, dst=BCAST) /
            ARP(op=1, hwsrc=R0, psrc=R0_IP, hwdst=ZERO, pdst=D_IP))


def inputs():
    return {"p0": [timed(HELD[0], 0.0), timed(HELD[1], 0.0001), timed(HELD[2], 0.5),
                   timed(HELD[3], 0.6), tick(1.0005), tick(2.001), tick(3.0015),
                   timed(LATE, 3.5)]}


def icmp_error(pkt, ident):
    orig = raw_bytes(pkt)[14:]
    quote = orig[:28]
    body = struct.pack("!BBHHH", 3, 1, 0, 0, 0) + quote
    body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
    return (Ether(src=R0, dst=A) /
            IP(src=R0_IP, dst=A_IP, ttl=64, tos=0xc0, id=ident, flags=0, proto=1) / Raw(body))


def expected(inp):
    # three requests, the errors about the three datagrams, one more request
    return {"p0": [request()] * 3 + [icmp_error(p, i) for i, p in enumerate(HELD[:3])] +
            [request()]}


COUNTERS = {
    "lpm.ip4_to_neigh": 5, "neigh.neigh_held": 5, "neigh.arp_request": 4,
    "neigh.neigh_failed": 1, "neigh.neigh_unresolved_to_icmp": 4,
    "neigh.neigh_hold_timeout": 0, "neigh.neigh_hold_stopped": 1,
    "neigh.arp_not_for_us": 3, "icmp.host_unreachable": 3, "icmp.icmp_for_icmp_error": 1,
    "totals.rx": 8, "totals.replicas": 4, "totals.tx": 7, "ports.p0.tx": 7,
}
