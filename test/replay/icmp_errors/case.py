"""ICMP errors from the icmp stage, modelled independently of pipefwd.

Route 10/8 -> r1 on p1 (mtu 1400); hosts on p0 (192.168.0.1/24). An error
(RFC 792, RFC 1812 4.3.2) goes back to the sender's MAC out of p0 from
192.168.0.1, TTL 64, precedence 6 (tos 0xc0), IP ids 0, 1, 2, ... in the
order sent (untagged), and quotes the original IPv4 header as received plus its first
8 payload bytes. Suppressed: an ICMP error, a non-first fragment, a packet
that came in an L2 broadcast (RFC 1812 4.3.2.7)."""
import struct

from replaylib import Ether, Dot1Q, IP, UDP, TCP, ICMP, Raw, BCAST, raw_bytes
from scapy.all import IPOption_Router_Alert
from scapy.utils import checksum

R0, R1, NH1 = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01"
HOST, SRC, R0_IP = "02:00:00:00:00:aa", "192.168.0.9", "192.168.0.1"
DF = "DF"
MTU1 = 1400


def ip(dst="10.1.2.3", ttl=64, dst_mac=R0, l4=None, payload=b"icmp-case", **kw):
    l4 = UDP(sport=1000, dport=53) / Raw(payload) if l4 is None else l4
    return Ether(src=HOST, dst=dst_mac) / IP(src=SRC, dst=dst, ttl=ttl, **kw) / l4


def sized(total, flags):
    """UDP datagram of IPv4 total length @total."""
    return ip(flags=flags, payload=b"s" * (total - 28))


# (packet, (type, code, mtu)) in input order; None: forwarded
ANSWERED = [
    (ip(ttl=1), (11, 0, 0)),
    (ip(ttl=0), (11, 0, 0)),
    (ip(dst="11.0.0.1"), (3, 0, 0)),
    (ip(dst="192.168.7.7", ttl=1), (3, 0, 0)),            # no route comes before TTL
    (sized(MTU1 + 1, DF), (3, 4, MTU1)),
    (sized(1900, DF), (3, 4, MTU1)),
    (ip(ttl=1, l4=TCP(sport=7, dport=80, flags="S") / Raw(b"t" * 30),
        options=[IPOption_Router_Alert()]), (11, 0, 0)),  # quote has the options
    (ip(ttl=1, l4=ICMP(type=8, id=1, seq=1) / Raw(b"ping")), (11, 0, 0)),
    (ip(ttl=1, l4=UDP(sport=1, dport=2)), (11, 0, 0)),    # exactly 28 bytes to quote
    # VID 0 priority tag: the error goes back untagged
    (Ether(src=HOST, dst=R0) / Dot1Q(vlan=0) / IP(src=SRC, dst="10.9.9.9", ttl=1) /
     UDP(sport=2, dport=3) / Raw(b"tagged"), (11, 0, 0)),
]
FORWARDED = [sized(MTU1, DF), ip(ttl=2)]
SUPPRESSED = {
    "icmp.icmp_for_icmp_error": [
        ip(ttl=1, l4=ICMP(type=3, code=1) / IP(src="10.1.2.3", dst=SRC) / UDP()),
        ip(dst="11.0.0.1", l4=ICMP(type=11, code=0) / IP(src="10.1.2.3", dst=SRC) / UDP()),
    ],
    "icmp.icmp_for_nonfirst_fragment": [ip(ttl=1, frag=4, proto=17, l4=Raw(b"f" * 16)),
                                        ip(dst="11.0.0.1", frag=8, proto=17, l4=Raw(b"g" * 8))],
    "icmp.icmp_for_l2_bcast": [ip(dst="11.0.0.1", dst_mac=BCAST),
                               ip(dst="11.0.0.1", dst_mac="01:00:5e:00:00:01")],
}
DROPPED = {"lpm.ip4_frag_needed_unsupported": [sized(MTU1 + 1, 0)]}


def inputs():
    pkts = []
    for pkt, _ in ANSWERED:
        pkts.append(pkt)
    pkts += FORWARDED
    for group in list(SUPPRESSED.values()) + list(DROPPED.values()):
        pkts += group
    return {"p0": pkts}


def icmp_error(pkt, err, ident):
    """The error a router sends about @pkt (as received)."""
    t, c, mtu = err
    orig = raw_bytes(pkt)[18 if Dot1Q in pkt else 14:]
    ihl = (orig[0] & 0xf) * 4
    total = struct.unpack("!H", orig[2:4])[0]
    quote = orig[:min(ihl + 8, total)]
    body = struct.pack("!BBHHH", t, c, 0, 0, mtu) + quote
    body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
    return (Ether(src=R0, dst=pkt[Ether].src) /
            IP(src=R0_IP, dst=pkt[IP].src, ttl=64, tos=0xc0, id=ident, flags=0, proto=1) /
            Raw(body))


def forward(pkt):
    p = Ether(raw_bytes(pkt))
    p[Ether].src, p[Ether].dst = R1, NH1
    p[IP].ttl -= 1
    del p[IP].chksum
    return Ether(bytes(p))


def expected(inp):
    return {"p0": [icmp_error(p, e, i) for i, (p, e) in enumerate(ANSWERED)],
            "p1": [forward(p) for p in FORWARDED]}


_kinds = {(11, 0): "time_exceeded", (3, 0): "net_unreachable", (3, 4): "frag_needed"}
_lpm_info = {(11, 0): "ip4_ttl_expired_to_icmp", (3, 0): "ip4_no_route_to_icmp",
             (3, 4): "ip4_mtu_exceeded_df_to_icmp"}
COUNTERS = {k: len(v) for k, v in list(SUPPRESSED.items()) + list(DROPPED.items())}
for _, (t, c, _m) in ANSWERED:
    COUNTERS["icmp." + _kinds[(t, c)]] = COUNTERS.get("icmp." + _kinds[(t, c)], 0) + 1
# lpm hands every answered and suppressed packet to icmp, counted as INFO
COUNTERS.update({"lpm.ip4_ttl_expired": 0, "lpm.ip4_no_route": 0, "lpm.ip4_mtu_exceeded_df": 0,
                 "lpm.ip4_ttl_expired_to_icmp": 8, "lpm.ip4_no_route_to_icmp": 6,
                 "lpm.ip4_mtu_exceeded_df_to_icmp": 2, "icmp.icmp_ratelimited": 0})
_n_in = len(inputs()["p0"])
COUNTERS.update({"totals.rx": _n_in, "totals.tx": len(ANSWERED) + len(FORWARDED),
                 "ports.p0.tx": len(ANSWERED), "ports.p1.tx": len(FORWARDED)})
