"""Neighbour resolution by ARP (RFC 826), modelled independently of pipefwd.

p0 is 192.168.0.1/24 (connected); 172.16/16 goes via 192.168.0.30 (a next
hop given by address); 10/8 via a static MAC on p1 (static MACs stay).
All input is on p0, one packet per burst, on the pcap clock:

- packets to an unknown host are held (queue 4), one broadcast ARP request
  asks for it; its reply releases them in order (TTL - 1, new MACs), and
  later packets go straight through;
- a request aimed at the router is answered and its sender learned (STALE,
  as Linux), so a packet to it needs no request; used while STALE, the
  entry is checked again with one unicast request;
- a gratuitous ARP changes a known entry's MAC (later packets use it, and
  the stale entry is probed at the new MAC);
- sender MACs that are broadcast, multicast or zero are never answered or
  learned; replies from strangers teach nothing (arp_accept 0);
- a fifth packet for an unresolved host overflows its queue (counted), and
  what is still held when pipefwd stops is dropped under its own name."""
from replaylib import (Ether, ARP, IP, UDP, Raw, BCAST, raw_bytes,
                       timeline_inputs, timeline_expected)

R0, R1, NH1 = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01"
R0_IP = "192.168.0.1"
A, A_IP = "02:00:00:00:00:a1", "192.168.0.9"
B, B2, B_IP = "02:00:00:00:00:b1", "02:00:00:00:00:b2", "192.168.0.20"
G, G_IP = "02:00:00:00:00:c1", "192.168.0.30"
C, C_IP = "02:00:00:00:00:d1", "192.168.0.7"
D_IP = "192.168.0.66"                   # never answers
E = "02:00:00:00:00:e1"
ZERO = "00:00:00:00:00:00"
QUEUE = 4


def udp(dst, seq):
    return (Ether(src=A, dst=R0) / IP(src=A_IP, dst=dst, ttl=64) /
            UDP(sport=5000, dport=6000) / Raw(b"seq%04d" % seq))


def arp(op, src, sha, spa, tpa, dst=BCAST, tha=ZERO):
    return Ether(src=src, dst=dst) / ARP(op=op, hwsrc=sha, psrc=spa, hwdst=tha, pdst=tpa)


# (time, packet, what the router sends for it: list of (port, frame))
def timeline():
    ev = []
    seq = iter(range(1000))
    to_b = [udp(B_IP, next(seq)) for _ in range(3)]
    to_g = [udp("172.16.5.5", next(seq)) for _ in range(2)]
    ev.append((0.000, to_b[0], [("p0", request(B_IP))]))
    ev += [(0.000, p, []) for p in to_b[1:]]
    ev.append((0.001, to_g[0], [("p0", request(G_IP))]))
    ev.append((0.001, to_g[1], []))
    p = udp("10.1.2.3", next(seq))
    ev.append((0.010, p, [("p1", fwd(p, NH1, R1))]))
    # B answers (unicast to the router): the three held packets go, in order
    ev.append((0.100, arp(2, B, B, B_IP, R0_IP, dst=R0, tha=R0),
               [("p0", fwd(q, B)) for q in to_b]))
    ev.append((0.101, arp(2, G, G, G_IP, R0_IP, dst=R0, tha=R0),
               [("p0", fwd(q, G)) for q in to_g]))
    for _ in range(2):
        p = udp(B_IP, next(seq))
        ev.append((0.200, p, [("p0", fwd(p, B))]))
    # C asks for the router: answered, C learned (STALE)
    ev.append((0.300, arp(1, C, C, C_IP, R0_IP), [("p0", reply(C, C_IP))]))
    p = udp(C_IP, next(seq))
    # forwarded at once; used while STALE: one unicast probe
    ev.append((0.400, p, [("p0", fwd(p, C)), ("p0", request(C_IP, C))]))
    # bad sender MACs: no answer, nothing learned
    ev.append((0.500, arp(1, E, BCAST, "192.168.0.40", R0_IP), []))
    ev.append((0.501, arp(1, E, "01:00:5e:00:00:01", "192.168.0.41", R0_IP), []))
    ev.append((0.502, arp(1, E, ZERO, "192.168.0.42", R0_IP), []))
    # gratuitous ARP: B moved to B2
    ev.append((0.600, arp(1, B2, B2, B_IP, B_IP), []))
    p = udp(B_IP, next(seq))
    ev.append((0.700, p, [("p0", fwd(p, B2)), ("p0", request(B_IP, B2))]))
    # a reply from a stranger, a request for someone else: nothing learned
    ev.append((0.800, arp(2, E, E, "192.168.0.50", "192.168.0.51"), []))
    ev.append((0.850, arp(1, C, C, C_IP, "192.168.0.99"), []))
    # D never answers: 4 held, the rest overflow; held at exit
    for k in range(10):
        ev.append((0.900, udp(D_IP, next(seq)), [("p0", request(D_IP))] if k == 0 else []))
    return ev


def request(tpa, dst=None):
    return (Ether(src=R0, dst=dst or BCAST) /
            ARP(op=1, hwsrc=R0, psrc=R0_IP, hwdst=ZERO, pdst=tpa))


def reply(mac, ip):
    return Ether(src=R0, dst=mac) / ARP(op=2, hwsrc=R0, psrc=R0_IP, hwdst=mac, pdst=ip)


def fwd(pkt, mac, src=R0):
    p = Ether(raw_bytes(pkt))
    p[Ether].src, p[Ether].dst = src, mac
    p[IP].ttl -= 1
    del p[IP].chksum
    return Ether(bytes(p))


def inputs():
    return timeline_inputs(timeline())


def expected(inp):
    return timeline_expected(timeline())


_n_in = len(timeline())
_n_out = sum(len(s) for _, _, s in timeline())
_requests = 5
COUNTERS = {
    "lpm.ip4_to_neigh": 3 + 2 + 10,
    "neigh.arp_request": _requests, "neigh.arp_reply": 1, "neigh.neigh_learned": 1,
    "neigh.neigh_resolved": 2, "neigh.neigh_updated": 1, "neigh.neigh_held": 3 + 2 + QUEUE,
    "neigh.neigh_released": 5, "neigh.neigh_hold_overflow": 10 - QUEUE,
    "neigh.neigh_hold_stopped": QUEUE, "neigh.arp_bad_sender_mac": 3,
    "neigh.arp_consumed": 4, "neigh.arp_not_for_us": 1, "neigh.neigh_failed": 0,
    "totals.rx": _n_in, "totals.replicas": _requests, "totals.tx": _n_out,
    "ports.p0.tx": _n_out - 1, "ports.p1.tx": 1,
}
