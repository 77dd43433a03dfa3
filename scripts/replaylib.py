# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers for replay cases (test/replay/<case>/case.py).

A case describes its input packets per port and computes the expected output
per port with an independent Python model of the behaviour. Nothing here
knows about pipefwd's implementation: only about packets and pcap files.
"""
import logging
import struct

# Scapy warns when it fills ARP/Ethernet fields by itself; cases set what matters.
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import Ether, Dot1Q, IP, IPv6, ARP, UDP, TCP, ICMP, Raw  # noqa: F401

# Reading pcaps and flows is shared with pipefwd-ctl replay (no scapy there).
from replaycmp import read_pcap, flow_key  # noqa: F401,E402
import pcaplib  # noqa: E402

BASE_TIME = 1700000000.0

# Well-known MACs used across cases.
MAC_A = "02:00:00:00:00:0a"
MAC_B = "02:00:00:00:00:0b"
MAC_C = "02:00:00:00:00:0c"
MAC_D = "02:00:00:00:00:0d"
BCAST = "ff:ff:ff:ff:ff:ff"


def timed(pkt, seconds):
    """Give a packet an explicit capture time (seconds after BASE_TIME)."""
    pkt.time = BASE_TIME + seconds
    pkt._pf_timed = True
    return pkt


def timeline_inputs(ev, port="p0", others=()):
    """Inputs of a cause-and-effect case: @ev is [(time, packet, [(port, frame)...])],
    every packet on @port at its time (+1 us per event so equal times keep their
    order); @others are ports with no input."""
    inp = {port: [timed(p, t + k * 1e-6) for k, (t, p, _) in enumerate(ev)]}
    inp.update({o: [] for o in others})
    return inp


def timeline_expected(ev, ports=("p0", "p1")):
    """What such a case sends: each event's frames, by port, in event order."""
    out = {p: [] for p in ports}
    for _, _, sent in ev:
        for port, frame in sent:
            out[port].append(frame)
    return out


def raw_bytes(pkt):
    """Bytes of a scapy packet or a bytes object."""
    return pkt if isinstance(pkt, (bytes, bytearray)) else bytes(pkt)


def udp4(src_mac=MAC_A, dst_mac=MAC_B, src="10.0.0.1", dst="10.0.1.1", sport=1000, dport=2000,
         ttl=64, payload=b"pipefwd-replay", vlan=None, **ipkw):
    """An Ethernet/IPv4/UDP packet (optionally 802.1Q tagged)."""
    l2 = Ether(src=src_mac, dst=dst_mac)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan)
    return l2 / IP(src=src, dst=dst, ttl=ttl, **ipkw) / UDP(sport=sport, dport=dport) / Raw(payload)


def tcp4(src_mac=MAC_A, dst_mac=MAC_B, src="10.0.0.1", dst="10.0.1.1", sport=1000, dport=80,
         flags="S", ttl=64, payload=b"", vlan=None):
    l2 = Ether(src=src_mac, dst=dst_mac)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan)
    return l2 / IP(src=src, dst=dst, ttl=ttl) / TCP(sport=sport, dport=dport, flags=flags) / Raw(payload)


def udp6(src_mac=MAC_A, dst_mac=MAC_B, src="2001:db8::1", dst="2001:db8:1::1", sport=1000,
         dport=2000, hlim=64, payload=b"pipefwd-replay", ext=()):
    """An Ethernet/IPv6/UDP packet; @ext: scapy extension headers before UDP."""
    l3 = IPv6(src=src, dst=dst, hlim=hlim)
    for h in ext:
        l3 = l3 / h
    return Ether(src=src_mac, dst=dst_mac) / l3 / UDP(sport=sport, dport=dport) / Raw(payload)


def tcp6(src_mac=MAC_A, dst_mac=MAC_B, src="2001:db8::1", dst="2001:db8:1::1", sport=1000,
         dport=80, flags="S", hlim=64, payload=b""):
    return (Ether(src=src_mac, dst=dst_mac) / IPv6(src=src, dst=dst, hlim=hlim) /
            TCP(sport=sport, dport=dport, flags=flags) / Raw(payload))


def write_pcap(path, pkts, linktype=1):
    """Write a classic pcap with microsecond timestamps (pcaplib).

    Packets without an explicit time (see timed()) get BASE_TIME + i us so
    files are byte-identical from run to run.
    """
    pkts = list(pkts)
    stamps = []
    for i, p in enumerate(pkts):
        t = float(p.time) if getattr(p, "_pf_timed", False) else BASE_TIME + i * 1e-6
        sec = int(t)
        usec = int(round((t - sec) * 1e6))
        stamps.append((sec + 1, usec - 1000000) if usec >= 1000000 else (sec, usec))
    pcaplib.write_pcap(path, (raw_bytes(p) for p in pkts), stamp=stamps.__getitem__,
                       linktype=linktype)


def ip4_header(data):
    """(offset, header bytes) of the IPv4 header in a frame, or None."""
    if len(data) < 14:
        return None
    off = 12
    et = struct.unpack("!H", data[off:off + 2])[0]
    if et == 0x8100 and len(data) >= 18:
        off = 16
        et = struct.unpack("!H", data[off:off + 2])[0]
    l3 = off + 2
    if et != 0x0800 or len(data) < l3 + 20:
        return None
    ihl = (data[l3] & 0xF) * 4
    if ihl < 20 or len(data) < l3 + ihl:
        return None
    return l3, data[l3:l3 + ihl]


def ones_sum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b[:len(b) // 2 * 2]))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def martian_dst(addr):
    """RFC 1812 5.3.7 / 4.3.2.7: destinations a router never forwards."""
    a = addr[0]
    return a == 0 or a == 127 or a >= 224 or addr == b"\xff\xff\xff\xff"


def rfc1812_violations(frames, router_macs):
    """Check routed frames (source MAC is one of the router's) for what
    RFC 1812 forbids: TTL 0, a header checksum that a full recompute
    disagrees with, a martian, multicast or limited-broadcast destination."""
    problems = []
    for data in frames:
        if data[6:12] not in router_macs:
            continue
        hdr = ip4_header(data)
        if hdr is None:
            continue
        _, ip = hdr
        if ip[8] == 0:
            problems.append("routed packet with TTL 0")
        if ones_sum(ip) != 0xFFFF:
            problems.append("routed packet whose header checksum is wrong")
        if martian_dst(ip[16:20]):
            problems.append("routed packet to a martian/broadcast destination %s"
                            % ".".join(str(b) for b in ip[16:20]))
    return problems


def icmp_error(pkt, err, ident, router_mac, router_ip):
    """The ICMP error a router sends about @pkt (a frame as received), as the
    icmp stage builds it: back to the sender's MAC from @router_mac and
    @router_ip, TTL 64, TOS 0xc0, IP id @ident, untagged, quoting the
    original IPv4 header (options included) and its first 8 payload bytes.
    @err = (type, code, arg): arg is 3/4's next-hop MTU (low half of the
    second word, RFC 1191) or 12's pointer (its first octet, RFC 792)."""
    from scapy.utils import checksum
    t, c, arg = err
    data = raw_bytes(pkt)
    l3, _ = ip4_header(data)
    orig = data[l3:]
    ihl = (orig[0] & 0xf) * 4
    total = struct.unpack("!H", orig[2:4])[0]
    word = arg << 24 if t == 12 else arg
    body = struct.pack("!BBHI", t, c, 0, word) + orig[:min(ihl + 8, total)]
    body = body[:2] + struct.pack("!H", checksum(body)) + body[4:]
    src = IP(orig).src
    return (Ether(src=router_mac, dst=Ether(data).src) /
            IP(src=router_ip, dst=src, ttl=64, tos=0xc0, id=ident, flags=0, proto=1) /
            Raw(body))
