"""IPv6 Neighbour Discovery (RFC 4861), modelled independently of pipefwd.

p0 is 2001:db8:1::1/64 (connected); 2001:db8:100::/48 goes via
2001:db8:1::fe (a gateway given by address), and so does 2001:db8:200::/48
(routes.txt, through the named next hop gw: { via: 2001:db8:1::fe }). All
input is on p0, one packet per burst, on the pcap clock:

- packets to an unknown host are held (queue 4) and one Neighbour
  Solicitation asks for it: to the solicited-node address ff02::1:ffXX:XXXX
  and MAC 33:33:ff:XX:XX:XX, from the port's address on that prefix, hop
  limit 255, the Source Link-Layer Address option (scapy computes the
  checksum); a solicited NA releases them in order (hop limit - 1, new
  MACs), and later packets go straight through;
- an NS from a host for the router's address is answered (solicited NA:
  R, S, O, the Target Link-Layer option) and teaches its sender (STALE,
  7.2.3): a packet to it needs no NS; used while STALE, the entry is
  checked again with one unicast NS, which its solicited NA answers;
- an unsolicited NA with Override to ff02::1 moves a host (7.2.5), and the
  moved, stale entry is probed at its new MAC (and answers);
- an NA with hop limit 64, one with S set sent to multicast (7.1.2) and one
  for an address without an entry teach nothing;
- a host that never answers: three NSs a second apart (NAs for nobody mark
  the time), then each held packet is answered with Destination
  Unreachable, address unreachable (1/3) from 2001:db8:1::1, quoting it as
  received; a fifth packet for it overflowed its queue (counted)."""
from replaylib import (Ether, IPv6, UDP, Raw, raw_bytes,
                       timeline_inputs, timeline_expected)
from scapy.all import (ICMPv6ND_NS, ICMPv6ND_NA, ICMPv6NDOptSrcLLAddr, ICMPv6NDOptDstLLAddr,
                       ICMPv6DestUnreach)
from scapy.utils6 import in6_getnsma, in6_getnsmac, inet_pton, inet_ntop
import socket

R0, R0_IP = "02:00:00:00:00:10", "2001:db8:1::1"
A, A_IP = "02:00:00:00:00:a1", "2001:db8:1::9"
B, B2, B_IP = "02:00:00:00:00:b1", "02:00:00:00:00:b2", "2001:db8:1::20"
G, G_IP = "02:00:00:00:00:c1", "2001:db8:1::fe"
C, C_IP = "02:00:00:00:00:d1", "2001:db8:1::7"
D_IP = "2001:db8:1::66"                 # never answers
QUEUE = 4
ALL_NODES, ALL_NODES_MAC = "ff02::1", "33:33:00:00:00:01"


def udp(dst, seq):
    return (Ether(src=A, dst=R0) / IPv6(src=A_IP, dst=dst, hlim=64) /
            UDP(sport=5000, dport=6000) / Raw(b"seq%04d" % seq))


def snm(addr):
    """Solicited-node address and MAC of @addr (scapy's RFC 4291 helpers)."""
    a = in6_getnsma(inet_pton(socket.AF_INET6, addr))
    return inet_ntop(socket.AF_INET6, a), in6_getnsmac(a)


def ns_out(target, dst_mac=None):
    """The router's NS for @target: multicast, or a unicast probe to @dst_mac."""
    dst, mac = snm(target) if dst_mac is None else (target, dst_mac)
    return (Ether(src=R0, dst=mac) / IPv6(src=R0_IP, dst=dst, hlim=255) /
            ICMPv6ND_NS(tgt=target) / ICMPv6NDOptSrcLLAddr(lladdr=R0))


def na_in(mac, tgt, s=1, o=1, dst=R0_IP, dst_mac=R0, hlim=255):
    return (Ether(src=mac, dst=dst_mac) / IPv6(src=tgt, dst=dst, hlim=hlim) /
            ICMPv6ND_NA(R=0, S=s, O=o, tgt=tgt) / ICMPv6NDOptDstLLAddr(lladdr=mac))


def ns_in(mac, src, tgt):
    dst, dmac = snm(tgt)
    return (Ether(src=mac, dst=dmac) / IPv6(src=src, dst=dst, hlim=255) /
            ICMPv6ND_NS(tgt=tgt) / ICMPv6NDOptSrcLLAddr(lladdr=mac))


def na_out(mac, ip):
    return (Ether(src=R0, dst=mac) / IPv6(src=R0_IP, dst=ip, hlim=255) /
            ICMPv6ND_NA(R=1, S=1, O=1, tgt=R0_IP) / ICMPv6NDOptDstLLAddr(lladdr=R0))


def fwd(pkt, mac):
    p = Ether(raw_bytes(pkt))
    p[Ether].src, p[Ether].dst = R0, mac
    p[IPv6].hlim -= 1
    return Ether(bytes(p))


def unreach(pkt):
    """Destination Unreachable, address unreachable (RFC 4443 3.1) about @pkt."""
    return (Ether(src=R0, dst=A) / IPv6(src=R0_IP, dst=A_IP, hlim=64) /
            ICMPv6DestUnreach(code=3) / Raw(raw_bytes(pkt)[14:]))


def tick(t):
    """An NA for nobody: the neigh stage sees it (time moves), nothing else happens."""
    return (t, na_in(C, "2001:db8:1::99", s=0, dst=ALL_NODES, dst_mac=ALL_NODES_MAC), [])


# (time, packet, what the router sends for it: list of (port, frame))
def timeline():
    ev = []
    seq = iter(range(1000))
    to_b = [udp(B_IP, next(seq)) for _ in range(3)]
    to_g = [udp("2001:db8:100::5", next(seq)) for _ in range(2)]
    ev.append((0.000, to_b[0], [("p0", ns_out(B_IP))]))
    ev += [(0.000, p, []) for p in to_b[1:]]
    ev.append((0.001, to_g[0], [("p0", ns_out(G_IP))]))
    ev.append((0.001, to_g[1], []))
    # B and G answer (solicited, to the router): the held packets go, in order
    ev.append((0.100, na_in(B, B_IP), [("p0", fwd(q, B)) for q in to_b]))
    ev.append((0.101, na_in(G, G_IP), [("p0", fwd(q, G)) for q in to_g]))
    for _ in range(2):
        p = udp(B_IP, next(seq))
        ev.append((0.200, p, [("p0", fwd(p, B))]))
    # the route file's route, by the named next hop: the same gateway, resolved
    p = udp("2001:db8:200::5", next(seq))
    ev.append((0.201, p, [("p0", fwd(p, G))]))
    # C asks for the router: answered, C learned (STALE)
    ev.append((0.300, ns_in(C, C_IP, R0_IP), [("p0", na_out(C, C_IP))]))
    p = udp(C_IP, next(seq))
    # forwarded at once; used while STALE: one unicast probe
    ev.append((0.400, p, [("p0", fwd(p, C)), ("p0", ns_out(C_IP, C))]))
    ev.append((0.450, na_in(C, C_IP), []))          # the probe answered: REACHABLE
    # B moved to B2: unsolicited NA with Override to all nodes
    ev.append((0.600, na_in(B2, B_IP, s=0, dst=ALL_NODES, dst_mac=ALL_NODES_MAC), []))
    p = udp(B_IP, next(seq))
    ev.append((0.700, p, [("p0", fwd(p, B2)), ("p0", ns_out(B_IP, B2))]))
    ev.append((0.750, na_in(B2, B_IP), []))
    # invalid or useless NAs: hop limit 64, S to multicast, no entry
    ev.append((0.800, na_in(G, G_IP, hlim=64), []))
    ev.append((0.801, na_in(G, G_IP, dst=ALL_NODES, dst_mac=ALL_NODES_MAC), []))
    ev.append((0.802, na_in(C, "2001:db8:1::55"), []))
    # D never answers: 4 held, the fifth overflows; NSs at 1.9 s and 2.9 s;
    # at 3.9 s it fails and the held four are answered with 1/3
    held = [udp(D_IP, next(seq)) for _ in range(QUEUE + 1)]
    ev.append((0.900, held[0], [("p0", ns_out(D_IP))]))
    ev += [(0.900, q, []) for q in held[1:]]
    ev.append(tick(1.9005)[:2] + ([("p0", ns_out(D_IP))],))
    ev.append(tick(2.9010)[:2] + ([("p0", ns_out(D_IP))],))
    ev.append(tick(3.9015)[:2] + ([("p0", unreach(q)) for q in held[:QUEUE]],))
    return ev


def inputs():
    return timeline_inputs(timeline(), others=("p1",))


def expected(inp):
    return timeline_expected(timeline())


_n_in = len(timeline())
_n_out = sum(len(s) for _, _, s in timeline())
_ns = 2 + 2 + 3     # B, G; the probes of C and B2; D three times
COUNTERS = {
    "lpm6.ip6_to_neigh": 3 + 2 + QUEUE + 1, "lpm6.nd_invalid": 2,
    "lpm6.nd_to_neigh": 2 + 1 + 1 + 1 + 1 + 1 + 3,
    "neigh.nd_ns_sent": _ns, "neigh.nd_na_sent": 1, "neigh.neigh_learned": 1,
    "neigh.neigh_resolved": 2, "neigh.neigh_updated": 1, "neigh.neigh_held": 3 + 2 + QUEUE,
    "neigh.neigh_released": 5, "neigh.neigh_hold_overflow": 1,
    "neigh.nd_na_consumed": 5, "neigh.nd_na_unknown": 1 + 3,
    "neigh.neigh_failed": 1, "neigh.neigh_unresolved_to_icmp6": QUEUE,
    "icmp6.address_unreachable": QUEUE,
    "totals.rx": _n_in, "totals.replicas": _ns, "totals.tx": _n_out,
    "ports.p0.tx": _n_out, "ports.p1.tx": 0,
}
