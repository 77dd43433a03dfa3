"""IPv6 routing on lpm6 and ICMPv6 errors from icmp6, modelled independently.

Route 2001:db8:1000::/36 -> r1 on p1 (mtu 1400); hosts on p0 (2001:db8::/64,
the router is 2001:db8::1 and fe80::ff:fe00:10 from its MAC). rx's
ip6_error edge feeds icmp6 too (Parameter Problem). Forwarded
packets leave p1 with the hop limit one lower and r1's MAC. Answers (echo
replies, solicited NAs, errors) go back to the sender's MAC out of p0. An
error (RFC 4443) comes from the port's global address (its link-local one
for a link-local sender), hop limit 64, and quotes the original IPv6 packet
as received, up to 1280 bytes in all."""
from replaylib import Ether, Dot1Q, IPv6, UDP, TCP, Raw, raw_bytes
from scapy.all import (ICMPv6EchoRequest, ICMPv6EchoReply, ICMPv6ND_NS, ICMPv6ND_NA,
                       ICMPv6NDOptSrcLLAddr, ICMPv6NDOptDstLLAddr, ICMPv6DestUnreach,
                       ICMPv6PacketTooBig, ICMPv6TimeExceeded, ICMPv6ParamProblem,
                       IPv6ExtHdrHopByHop, IPv6ExtHdrFragment, IPv6ExtHdrDestOpt)

R0, R1, NH1 = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01"
HOST, SRC, R0_IP, R1_IP = "02:00:00:00:00:aa", "2001:db8::9", "2001:db8::1", "2001:db8:ff::1"
R0_LL, HOST_LL = "fe80::ff:fe00:10", "fe80::ff:fe00:aa"
FAR = "2001:db8:1234::5"
MTU1 = 1400


def ip6(dst=FAR, src=SRC, hlim=64, dst_mac=R0, l4=None):
    l4 = UDP(sport=1000, dport=53) / Raw(b"ipv6-case") if l4 is None else l4
    return Ether(src=HOST, dst=dst_mac) / IPv6(src=src, dst=dst, hlim=hlim) / l4


def sized(plen):
    """UDP over IPv6 with payload length @plen."""
    return ip6(l4=UDP(sport=5, dport=6) / Raw(b"s" * (plen - 8)))


def empty(dst):
    """No upper layer (Next Header 59), payload length 0: a 54-byte frame.
    lpm6's fast path must not take it to a local, connected or missing next
    hop (their payload limit is 0)."""
    return Ether(src=HOST, dst=R0) / IPv6(src=SRC, dst=dst, nh=59, plen=0)


def ns(target, dst, hlim=255, src=SRC, sll=True, dst_mac="33:33:ff:00:00:01"):
    p = ICMPv6ND_NS(tgt=target)
    if sll:
        p = p / ICMPv6NDOptSrcLLAddr(lladdr=HOST)
    return Ether(src=HOST, dst=dst_mac) / IPv6(src=src, dst=dst, hlim=hlim) / p


def echo(dst, src=SRC, cksum=None):
    e = ICMPv6EchoRequest(id=7, seq=3, data=b"ping6")
    if cksum is not None:
        e.cksum = cksum
    return ip6(dst=dst, src=src, l4=e)


FORWARDED = [
    ip6(),
    ip6(l4=IPv6ExtHdrHopByHop() / TCP(sport=7, dport=80, flags="S")),
    ip6(l4=IPv6ExtHdrFragment(m=1, id=9) / UDP(sport=1, dport=2) / Raw(b"f" * 32)),
    sized(MTU1 - 40),                                    # exactly the egress MTU
    ip6(hlim=2),
    Ether(src=HOST, dst=R0) / Dot1Q(vlan=0) / IPv6(src=SRC, dst=FAR) / UDP() / Raw(b"vid0"),
    empty(FAR),
]

# (packet, reply) where reply is a function of the packet
ECHOES = [echo(R0_IP), echo(R1_IP), echo(R0_LL, src=HOST_LL),
          # VID 0 priority tag: answered untagged
          Ether(src=HOST, dst=R0) / Dot1Q(vlan=0) / IPv6(src=SRC, dst=R0_IP) /
          ICMPv6EchoRequest(id=9, seq=1, data=b"tagged")]
NSS = [
    ns(R0_IP, "ff02::1:ff00:1"),                         # multicast, with SLLAO
    ns(R0_LL, R0_LL, src=HOST_LL, sll=False, dst_mac=R0),  # unicast NUD, no option
    Ether(src=HOST, dst="33:33:ff:00:00:01") / Dot1Q(vlan=0) /
    IPv6(src=SRC, dst="ff02::1:ff00:1", hlim=255) / ICMPv6ND_NS(tgt=R0_IP),
]
# (packet, (type, code, value))
ERRORS = [
    (ip6(hlim=1), (3, 0, 0)),
    (ip6(hlim=0), (3, 0, 0)),
    (ip6(dst="2001:db9::1"), (1, 0, 0)),
    (ip6(dst="2001:db9::1", hlim=1), (1, 0, 0)),         # no route comes before hop limit
    (empty("2001:db9::1"), (1, 0, 0)),
    (ip6(src=HOST_LL), (1, 2, 0)),                      # link-local source, off-link
    (sized(MTU1 - 39), (2, 0, MTU1)),
    (sized(1500), (2, 0, MTU1)),                         # quote cut at 1280 bytes in all
    (ip6(hlim=1, l4=IPv6ExtHdrDestOpt() / UDP(sport=3, dport=4)), (3, 0, 0)),
    # rx's ip6_error edge: HBH after another header (code 1, pointer to the
    # Next Header that named it), a first fragment without its UDP header (RFC 7112)
    (ip6(l4=IPv6ExtHdrDestOpt() / IPv6ExtHdrHopByHop() / UDP(sport=8, dport=9)), (4, 1, 40)),
    (ip6(l4=IPv6ExtHdrFragment(m=1, id=3, nh=17) / Raw(b"frag")), (4, 3, 0)),
]
SUPPRESSED = {
    "icmp6.icmp6_for_icmp6_error": [
        ip6(hlim=1, l4=ICMPv6DestUnreach() / IPv6(src=FAR, dst=SRC) / UDP()),
        ip6(dst="2001:db9::1", l4=ICMPv6TimeExceeded() / IPv6(src=FAR, dst=SRC) / UDP()),
    ],
    "icmp6.icmp6_for_l2_mcast": [ip6(dst="2001:db9::1", dst_mac="33:33:00:00:00:01")],
}
DROPPED = {
    "lpm6.ip6_src_mcast": [ip6(src="ff02::1")],
    "lpm6.ip6_src_unspecified": [ip6(src="::")],
    "lpm6.ip6_src_loopback": [ip6(src="::1")],
    "lpm6.ip6_src_v4mapped": [ip6(src="::ffff:10.0.0.1")],
    "lpm6.ip6_dst_martian": [ip6(dst="::1"), ip6(dst="::ffff:10.0.0.1")],
    "lpm6.ip6_mcast_dst": [ip6(dst="ff0e::1", dst_mac="33:33:00:00:00:01")],
    "lpm6.ip6_linklocal_dst": [ip6(dst="fe80::1234")],
    "lpm6.ip6_neighbour_unresolved": [ip6(dst="2001:db8::77"), empty("2001:db8::77")],
    "lpm6.ip6_l2mcast_unicast": [ip6(dst_mac="33:33:00:00:00:01")],
    "lpm6.l3_mac_mismatch": [ip6(dst_mac="02:00:00:00:00:99")],
    "lpm6.nd_invalid": [ns(R0_IP, "ff02::1:ff00:1", hlim=64)],
    "lpm6.nd_not_for_us": [ns("2001:db8::55", "ff02::1:ff00:55", dst_mac="33:33:ff:00:00:55"),
                           ns(R1_IP, R0_IP, dst_mac=R0)],   # p1's address asked on p0
    "lpm6.nd_ignored": [ip6(dst=R0_IP, l4=ICMPv6ND_NA(tgt=SRC))],
    "lpm6.ip6_local_unsupported": [ip6(dst=R0_IP), empty(R0_IP)],
    "lpm6.icmp6_bad_checksum": [echo(R0_IP, cksum=0x1234)],
}


def inputs():
    pkts = list(FORWARDED) + ECHOES + NSS + [p for p, _ in ERRORS]
    for group in list(SUPPRESSED.values()) + list(DROPPED.values()):
        pkts += group
    return {"p0": pkts}


def forward(pkt):
    p = Ether(raw_bytes(pkt))
    if Dot1Q in p:
        p = Ether(src=p.src, dst=p.dst) / p[IPv6]
    p[Ether].src, p[Ether].dst = R1, NH1
    p[IPv6].hlim -= 1
    return Ether(bytes(p))


def echo_reply(pkt):
    e = pkt[ICMPv6EchoRequest]
    return (Ether(src=R0, dst=HOST) / IPv6(src=pkt[IPv6].dst, dst=pkt[IPv6].src, hlim=64) /
            ICMPv6EchoReply(id=e.id, seq=e.seq, data=e.data))


def na(pkt):
    tgt = pkt[ICMPv6ND_NS].tgt
    return (Ether(src=R0, dst=HOST) / IPv6(src=tgt, dst=pkt[IPv6].src, hlim=255) /
            ICMPv6ND_NA(R=1, S=1, O=1, tgt=tgt) / ICMPv6NDOptDstLLAddr(lladdr=R0))


def icmp6_error(pkt, err):
    t, c, val = err
    orig = raw_bytes(pkt)[18 if Dot1Q in pkt else 14:]
    quote = Raw(orig[:1280 - 48])
    src = R0_LL if pkt[IPv6].src.startswith("fe80") else R0_IP
    hdr = {1: lambda: ICMPv6DestUnreach(code=c), 2: lambda: ICMPv6PacketTooBig(mtu=val),
           3: lambda: ICMPv6TimeExceeded(code=c),
           4: lambda: ICMPv6ParamProblem(code=c, ptr=val)}[t]()
    return Ether(src=R0, dst=HOST) / IPv6(src=src, dst=pkt[IPv6].src, hlim=64) / hdr / quote


def expected(inp):
    return {"p0": [echo_reply(p) for p in ECHOES] + [na(p) for p in NSS] +
            [icmp6_error(p, e) for p, e in ERRORS],
            "p1": [forward(p) for p in FORWARDED]}


_kinds = {(3, 0): "time_exceeded", (1, 0): "no_route", (1, 2): "beyond_scope",
          (2, 0): "packet_too_big", (4, 1): "param_problem", (4, 3): "param_problem"}
COUNTERS = {k: len(v) for k, v in list(SUPPRESSED.items()) + list(DROPPED.items())}
for _, (t, c, _v) in ERRORS:
    COUNTERS["icmp6." + _kinds[(t, c)]] = COUNTERS.get("icmp6." + _kinds[(t, c)], 0) + 1
COUNTERS.update({"lpm6.ip6_hop_limit_expired": 0, "lpm6.ip6_no_route": 0,
                 "lpm6.ip6_too_big": 0, "lpm6.ip6_hop_limit_to_icmp": 4,
                 "lpm6.ip6_no_route_to_icmp": 5, "lpm6.ip6_too_big_to_icmp": 2,
                 "lpm6.ip6_linklocal_src_to_icmp": 1, "icmp6.icmp6_ratelimited": 0,
                 "lpm6.icmp6_echo_reply": len(ECHOES), "lpm6.nd_na_sent": len(NSS),
                 "rx.ip6_ext_to_icmp": 2, "rx.ip6_hbh_not_first": 0,
                 "rx.ip6_frag_incomplete_chain": 0})
_n_in = len(inputs()["p0"])
_n_p0 = len(ECHOES) + len(NSS) + len(ERRORS)
COUNTERS.update({"totals.rx": _n_in, "totals.tx": _n_p0 + len(FORWARDED),
                 "ports.p0.tx": _n_p0, "ports.p1.tx": len(FORWARDED)})
