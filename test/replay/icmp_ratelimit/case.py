"""ICMP error rate limiting (RFC 1812 4.3.2.8), modelled as a token bucket.

icmp stage with rate_pps 10 and rate_burst 3: a full bucket holds 3 errors,
one error's worth of credit comes back every 100 ms of packet time
(`clock: pcap`, each packet's capture time). TTL-1 packets from p0 arrive
in groups; the model spends and refills the bucket on their timestamps."""
import struct

from replaylib import Ether, IP, UDP, Raw, raw_bytes, timed
from scapy.utils import checksum

R0, HOST, SRC, R0_IP = "02:00:00:00:00:10", "02:00:00:00:00:aa", "192.168.0.9", "192.168.0.1"
RATE, BURST = 10, 3
# (seconds after the first packet, how many TTL-1 packets at that time)
GROUPS = [(0.0, 5), (0.25, 3), (0.3, 1), (0.35, 1), (10.0, 4), (10.05, 2), (10.1, 1)]


def packets():
    out = []
    for t, n in GROUPS:
        for k in range(n):
            out.append(timed(Ether(src=HOST, dst=R0) /
                             IP(src=SRC, dst="10.1.2.3", ttl=1) /
                             UDP(sport=4000 + len(out), dport=53) / Raw(b"rl"), t + k * 1e-6))
    return out


def bucket(pkts):
    """Which packets get an error: credit in ns, capped at BURST errors."""
    cost = 10**9 // RATE
    cap = credit = cost * BURST
    last = None
    sent = []
    for p in pkts:
        now = int(round(float(p.time) * 1e6)) * 1000
        if last is not None and now > last:
            credit = min(cap, credit + now - last)
        last = now if last is None or now > last else last
        if credit >= cost:
            credit -= cost
            sent.append(p)
    return sent


def icmp_error(pkt, ident):
    orig = raw_bytes(pkt)[14:]
    quote = orig[:28]
    body = struct.pack("!BBHHH", 11, 0, 0, 0, 0) + quote
    body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
    return (Ether(src=R0, dst=HOST) /
            IP(src=R0_IP, dst=SRC, ttl=64, tos=0xc0, id=ident, flags=0, proto=1) / Raw(body))


def inputs():
    return {"p0": packets()}


def expected(inp):
    return {"p0": [icmp_error(p, i) for i, p in enumerate(bucket(packets()))]}


_n, _sent = len(packets()), len(bucket(packets()))
COUNTERS = {"icmp.time_exceeded": _sent, "icmp.icmp_ratelimited": _n - _sent,
            "lpm.ip4_ttl_expired_to_icmp": _n, "lpm.ip4_ttl_expired": 0,
            "totals.rx": _n, "totals.tx": _sent, "ports.p0.tx": _sent, "ports.p1.tx": 0}
