"""Routing headers to the router (RFC 8200 4.4, RFC 5095), modelled
independently of pipefwd.

The node a packet is addressed to processes its Routing header. A router
that implements no routing type (Type 0 is deprecated by RFC 5095, the
others are not its business) treats every one as unrecognised:
- Segments Left 0: the header is ignored and the next one processed, so
  an echo request behind it is answered (the reply is a new packet: no
  Routing header, from the address the request went to, hop limit 64);
- Segments Left > 0: the packet is discarded and an ICMPv6 Parameter
  Problem, code 0, points at the Routing Type field (its offset from the
  start of the IPv6 header: 42 for a header right after it), sent from the
  port's global address and quoting the packet (RFC 4443 3.4); an ICMPv6
  error behind it is never answered (RFC 4443 2.4 (e)).
A router that only forwards the packet does not look at the header."""
from replaylib import Ether, IPv6, UDP, Raw, raw_bytes
from scapy.all import (ICMPv6EchoRequest, ICMPv6EchoReply, ICMPv6ParamProblem,
                       ICMPv6DestUnreach, IPv6ExtHdrRouting, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrSegmentRouting)

R0, R1, NH1 = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01"
HOST, SRC, R0_IP, R1_IP = "02:00:00:00:00:aa", "2001:db8::9", "2001:db8::1", "2001:db8:ff::1"
R0_LL, HOST_LL = "fe80::ff:fe00:10", "fe80::ff:fe00:aa"
FAR = "2001:db8:1234::5"
HOPS = ["2001:db8:1234::7", "2001:db8:1234::8"]


def pkt(dst, l4, src=SRC):
    return Ether(src=HOST, dst=R0) / IPv6(src=src, dst=dst, hlim=64) / l4


def rh0(segleft, addrs=HOPS):
    return IPv6ExtHdrRouting(type=0, segleft=segleft, addresses=addrs)


def echo(n):
    return ICMPv6EchoRequest(id=0x55, seq=n, data=b"rh-" + bytes([0x30 + n]) * 7)


def udp():
    return UDP(sport=4000, dport=53) / Raw(b"routing-header")


# Segments Left 0: skipped; the echo request behind it is answered.
ECHOES = [
    pkt(R0_IP, rh0(0) / echo(1)),
    pkt(R1_IP, rh0(0, HOPS[:1]) / echo(2)),                   # p1's address, asked on p0
    pkt(R0_LL, rh0(0) / echo(3), src=HOST_LL),
    pkt(R0_IP, rh0(0) / IPv6ExtHdrRouting(type=2, segleft=0, addresses=[R0_IP]) / echo(4)),
    pkt(R0_IP, IPv6ExtHdrRouting(type=4, segleft=0, addresses=[R0_IP]) / echo(5)),
]
# (packet, pointer): Segments Left > 0, Parameter Problem 0 at the Routing Type.
PROBLEMS = [
    (pkt(R0_IP, rh0(1) / echo(6)), 42),                       # RFC 5095's case
    (pkt(R0_IP, rh0(2) / udp()), 42),
    (pkt(R0_IP, IPv6ExtHdrRouting(type=2, segleft=1, addresses=[R0_IP]) / echo(7)), 42),
    (pkt(R0_IP, IPv6ExtHdrSegmentRouting(addresses=[R0_IP, FAR], segleft=1) / udp()), 42),
    (pkt(R0_IP, IPv6ExtHdrHopByHop() / rh0(1) / udp()), 50),   # behind an 8-byte HBH
    (pkt(R0_IP, rh0(0, HOPS[:1]) / rh0(1) / echo(8)), 66),     # the second one counts
]
# Forwarded unchanged but for hop limit and MACs: not addressed to the router.
FORWARDED = [pkt(FAR, rh0(1) / udp()), pkt(FAR, rh0(0) / echo(9))]
# Not answered.
UNSUPPORTED = [pkt(R0_IP, rh0(0) / udp()),                    # skipped, then UDP: dropped
               pkt(R0_IP, rh0(0) / IPv6ExtHdrDestOpt() / echo(10))]
FOR_ERROR = [pkt(R0_IP, rh0(1) / ICMPv6DestUnreach() / IPv6(src=R0_IP, dst=FAR) / udp())]


def inputs():
    return {"p0": ECHOES + [p for p, _ in PROBLEMS] + FORWARDED + UNSUPPORTED + FOR_ERROR}


def echo_reply(p):
    e = p[ICMPv6EchoRequest]
    return (Ether(src=R0, dst=HOST) / IPv6(src=p[IPv6].dst, dst=p[IPv6].src, hlim=64) /
            ICMPv6EchoReply(id=e.id, seq=e.seq, data=e.data))


def param_problem(p, ptr):
    quote = raw_bytes(p)[14:][:1280 - 48]
    return (Ether(src=R0, dst=HOST) / IPv6(src=R0_IP, dst=p[IPv6].src, hlim=64) /
            ICMPv6ParamProblem(code=0, ptr=ptr) / Raw(quote))


def forward(p):
    q = Ether(raw_bytes(p))
    q[Ether].src, q[Ether].dst = R1, NH1
    q[IPv6].hlim -= 1
    return Ether(bytes(q))


def expected(inp):
    return {"p0": [echo_reply(p) for p in ECHOES] + [param_problem(p, v) for p, v in PROBLEMS],
            "p1": [forward(p) for p in FORWARDED]}


_n_in = len(inputs()["p0"])
_n_p0 = len(ECHOES) + len(PROBLEMS)
COUNTERS = {
    "lpm6.icmp6_echo_reply": len(ECHOES),
    "lpm6.ip6_routing_header_to_icmp": len(PROBLEMS) + len(FOR_ERROR),
    "lpm6.ip6_routing_header": 0,
    "lpm6.ip6_local_unsupported": len(UNSUPPORTED),
    "icmp6.param_problem": len(PROBLEMS),
    "icmp6.icmp6_for_icmp6_error": len(FOR_ERROR),
    "totals.rx": _n_in, "totals.tx": _n_p0 + len(FORWARDED),
    "ports.p0.tx": _n_p0, "ports.p1.tx": len(FORWARDED),
}
