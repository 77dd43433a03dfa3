"""Hostile packets on a routed (L3) port, each untagged and priority-tagged.

docs/reliability.md cases not already in lpm_forward / vlan / malformed:
every case below is sent twice, untagged and with an 802.1Q VID 0 priority
tag (case 14: treated as untagged, the tag does not leave), and a few with
VID 10, which a routed port never accepts (lpm.vlan_unknown, case 15).
No ICMP is ever generated (cases 26, 31, 35, 38): nothing comes back on p0.
Routes: 10/8 -> r1 on p1 (default mtu 1500, frames up to 1514); p0 accepts jumbo frames (9018).
The expected output is modelled on bytes (TTL - 1, a full header checksum
recompute, next-hop and egress MACs, the tag removed), not captured."""
import struct

from replaylib import Ether, Dot1Q, IP, IPv6, UDP, TCP, ICMP, Raw, BCAST, raw_bytes

R0, R1 = "02:00:00:00:00:10", "02:00:00:00:00:11"
NH1 = "02:00:00:00:01:01"
HOST = "02:00:00:00:00:aa"
SRC = "192.168.0.9"
DF, MF = 2, 1


def ip(dst="10.1.2.3", ttl=64, proto="udp", sport=1000, payload=b"hostile-l3", dst_mac=R0,
       opts=b"", flags=0, frag=0, l4=None, src=SRC):
    """Ethernet/IPv4 with raw option bytes spliced in (checksum recomputed)."""
    if l4 is None:
        l4 = (UDP(sport=sport, dport=53) if proto == "udp" else
              TCP(sport=sport, dport=80, flags="S")) / Raw(payload)
    p = bytearray(bytes(IP(src=src, dst=dst, ttl=ttl, flags=flags, frag=frag) / l4))
    if opts:
        assert len(opts) % 4 == 0
        p[20:20] = opts
        p[0] = 0x40 | (20 + len(opts)) // 4
        struct.pack_into("!H", p, 2, len(p))
    p[10:12] = b"\0\0"
    struct.pack_into("!H", p, 10, cksum(p[:(p[0] & 15) * 4]))
    return Ether(src=HOST, dst=dst_mac, type=0x0800) / Raw(bytes(p))


def raw_l4(proto, data):
    """An IPv4 payload given as bytes with an explicit protocol number."""
    return data, proto


def frag(proto_num, data, flags, offset, ttl=64):
    """A fragment: IPv4 header with protocol @proto_num and raw payload @data."""
    p = bytearray(bytes(IP(src=SRC, dst="10.1.2.3", ttl=ttl, proto=proto_num, flags=flags,
                           frag=offset) / Raw(data)))
    p[10:12] = b"\0\0"
    struct.pack_into("!H", p, 10, cksum(p[:20]))
    return Ether(src=HOST, dst=R0, type=0x0800) / Raw(bytes(p))


def cksum(b):
    b = bytes(b) + (b"\0" if len(b) % 2 else b"")
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def tagged(pkt, vid):
    b = raw_bytes(pkt)
    return Ether(b[:12] + struct.pack("!HH", 0x8100, vid) + b[12:])


def both(pkts):
    """Case 14: each packet untagged and priority-tagged (VID 0)."""
    return [p for pkt in pkts for p in (pkt, tagged(pkt, 0))]


TCP20 = bytes(TCP(sport=1, dport=80, flags="S"))        # a whole 20 B TCP header
UDP8 = bytes(UDP(sport=1, dport=53, len=16)) + b"payload!"


def forwarded_cases():
    return {
        # 27: TTL 2 routed leaves with TTL 1 (untagged; 14: VID 0 tag removed)
        "27_ttl2": both([ip(ttl=2, sport=1)]),
        # 28a: well-formed options forwarded transparently: NOP/EOL padding,
        # Record Route (not filled in: no slow path), Router Alert, timestamp
        "28a_options": both([
            ip(sport=2, opts=b"\x01\x01\x01\x00"),
            ip(sport=3, opts=b"\x07\x07\x04\x00\x00\x00\x00\x01"),
            ip(sport=4, opts=b"\x94\x04\x00\x00"),
            ip(sport=5, opts=b"\x44\x0c\x05\x00" + b"\0" * 8),
            ip(sport=6, opts=b"\x00\xff\xff\xff"),       # bytes after EOL are not read
        ]),
        # 29/30 counterparts: fragments that are fine go through unreassembled
        "30_ok_fragments": both([
            frag(6, TCP20 + b"x" * 4, MF, 0),               # first, whole TCP header
            frag(17, UDP8, MF, 0),                          # first, whole UDP header
            frag(6, b"y" * 8, 0, 2),                        # last, offset 16 B
            frag(1, b"\x08\x00\xf7\xff", MF, 0),            # ICMP is not checked
        ]),
        # 31: exactly the MTU (1500) of p1, DF set, sent from a jumbo port
        "31_fits": both([ip(sport=7, flags=DF, payload=b"m" * (1500 - 28))]),
    }


def dropped_cases():
    """counter -> packets; the counter is lpm's unless it names its stage."""
    icmp_err = ICMP(type=3, code=1) / IP(src="10.1.2.3", dst=SRC) / UDP(sport=53, dport=1)
    return {
        # 12: unicast MAC that is not the ingress port's
        "lpm.l3_mac_mismatch": both([ip(dst_mac="02:00:00:00:77:77"), ip(dst_mac=R1)]),
        # 13: L2 broadcast / multicast carrying a unicast IPv4 destination; 38(iii):
        # even with TTL 1 no ICMP is sent (the L2 check comes first)
        "lpm.l3_l2bcast_ip_unicast": both([ip(dst_mac=BCAST), ip(dst_mac=BCAST, ttl=1),
                                           ip(dst_mac="01:00:5e:01:02:03")]),
        # 15: a routed port is untagged: any VID but 0 is refused
        "lpm.vlan_unknown": [tagged(ip(), 10), tagged(ip(opts=b"\x83\x07\x04" + b"\0" * 5), 10)],
        # 17: EtherTypes an IPv4 router does not handle: nothing wired for them
        "rx.ethertype_unsupported": both([
            Ether(src=HOST, dst=R0, type=0xAAAA) / Raw(b"\0" * 46),
            Ether(src=HOST, dst=R0) / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP() / Raw(b"v6"),
        ]),
        # 26: TTL 1 and 0 (also tagged); 38(i) an ICMP error and 38(ii) a
        # non-first fragment with TTL 1: dropped, never answered
        "lpm.ip4_ttl_expired": both([ip(ttl=1), ip(ttl=0), ip(ttl=1, l4=icmp_err),
                                     frag(17, b"z" * 16, 0, 4, ttl=1)]),
        # 28b: loose and strict source route
        "lpm.ip4_srcroute": both([ip(opts=b"\x83\x07\x04\x0a\x01\x02\x03\x00"),
                                  ip(opts=b"\x01\x89\x07\x04\x0a\x01\x02\x03")]),
        # 28c: option length 0, 1, running past IHL, no room for the length byte
        "lpm.ip4_bad_option": both([ip(opts=b"\x44\x00\x00\x00"), ip(opts=b"\x07\x01\x00\x00"),
                                    ip(opts=b"\x07\x0b\x04\x00\x00\x00\x00\x00"),
                                    ip(opts=b"\x01\x01\x01\x94")]),
        # 30: fragment offset 1 (overlapping a TCP header), tiny first fragments
        "lpm.ip4_frag_offset_one": both([frag(6, b"o" * 16, 0, 1), frag(17, b"o" * 16, MF, 1)]),
        "lpm.ip4_tiny_fragment": both([frag(6, TCP20[:8], MF, 0), frag(6, TCP20[:16], MF, 0),
                                       frag(17, UDP8[:4], MF, 0)]),
        # 31: longer than p1's MTU (1500), with and without DF: no
        # fragmentation, no ICMP 3/4 (documented deviation)
        "lpm.ip4_mtu_exceeded_df": both([ip(flags=DF, payload=b"m" * (1501 - 28)),
                                         ip(flags=DF, payload=b"j" * 1900)]),
        "lpm.ip4_frag_needed_unsupported": both([ip(payload=b"m" * (1501 - 28))]),
        # 32-35 on a tagged port (the untagged forms are in lpm_forward)
        "lpm.ip4_martian_src": [tagged(ip(src="127.0.0.1"), 0)],
        "lpm.ip4_martian_dst": [tagged(ip(dst="240.0.0.1"), 0)],
        "lpm.ip4_bcast": [tagged(ip(dst="255.255.255.255", dst_mac=BCAST), 0)],
        "lpm.ip4_mcast_unsupported": [tagged(ip(dst="224.0.0.5", dst_mac="01:00:5e:00:00:05"), 0)],
        "lpm.ip4_no_route": [tagged(ip(dst="11.0.0.1"), 0), tagged(ip(dst="11.0.0.1", ttl=1), 0)],
    }


def inputs():
    pkts = [p for v in forwarded_cases().values() for p in v]
    pkts += [p for v in dropped_cases().values() for p in v]
    return {"p0": pkts, "p1": []}


def route(pkt):
    """Routed by 10/8 -> r1: tag removed, TTL - 1, full checksum, new MACs."""
    b = bytearray(raw_bytes(pkt))
    if b[12:14] == b"\x81\x00":
        del b[12:16]
    h = bytearray(b[14:])
    hl = (h[0] & 15) * 4
    h[8] -= 1
    h[10:12] = b"\0\0"
    struct.pack_into("!H", h, 10, cksum(h[:hl]))
    return Ether(bytes.fromhex(NH1.replace(":", "")) + bytes.fromhex(R1.replace(":", "")) +
                 b[12:14] + bytes(h))


def expected(inp):
    return {"p0": [], "p1": [route(p) for v in forwarded_cases().values() for p in v]}


def _has_options(pkt):
    b = raw_bytes(pkt)
    off = 18 if b[12:14] == b"\x81\x00" else 14
    return b[off - 2:off] == b"\x08\x00" and (b[off] & 15) > 5


def _counters():
    c = {k: len(v) for k, v in dropped_cases().items()}
    ins = inputs()["p0"]
    fwd = expected(None)["p1"]
    c.update({
        "rx.ip4_options_seen": sum(_has_options(p) for p in ins),
        "rx.vlan_tagged": sum(raw_bytes(p)[12:14] == b"\x81\x00" for p in ins),
        "totals.rx": len(ins),
        "totals.tx": len(fwd),
        "ports.p1.tx": len(fwd),
        "ports.p0.tx": 0,
    })
    return c


COUNTERS = _counters()
