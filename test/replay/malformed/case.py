"""Malformed frames on the rx parser (reliability.md cases 1, 2, 4, 6, 7, 18-25):
each is dropped with its named counter and nothing else changes; well-formed
frames around them (runts, IPv4 with options, Ethernet padding, valid 802.3
LLC) still cross, padding trimmed."""
import struct

from replaylib import (ARP, Ether, IP, IPv6, Raw, UDP, MAC_A, MAC_B, BCAST, raw_bytes, udp4)
from scapy.layers.inet import IPOption_NOP, IPOption_EOL  # noqa: F401
from scapy.all import IPOption


def eth(et, payload, src=MAC_A):
    return Ether(src=src, dst=MAC_B, type=et) / Raw(payload)


def ip_hdr(**kw):
    return raw_bytes(IP(src="10.0.0.1", dst="10.0.1.1", **kw))


def bad_cases():
    ok_ip = raw_bytes(IP(src="10.0.0.1", dst="10.0.1.1") / UDP() / Raw(b"z" * 18))
    big_ip_frame = udp4(payload=b"o" * (1518 - 14 - 28 + 1))  # 1519 bytes
    llc = struct.pack("!6s6sH", bytes.fromhex("02000000000b"), bytes.fromhex("02000000000a"), 1000)
    return {
        "eth_truncated": [raw_bytes(udp4())[:10],
                          bytes.fromhex("02000000000b02000000000a8100000a")],
        "eth_oversize": [big_ip_frame],
        "l2_invalid_src_mac": [udp4(src_mac=BCAST), udp4(src_mac="01:00:5e:00:00:01"),
                               udp4(src_mac="00:00:00:00:00:00")],
        "bad_llc_length": [llc + b"\xaa\xaa\x03" + b"x" * 47],
        "ip4_too_short": [eth(0x0800, ok_ip[:10]),
                          eth(0x0800, ip_hdr(len=10) + b"p" * 20)],
        "ip4_bad_version": [eth(0x0800, ip_hdr(version=6) + b"p" * 8),
                            eth(0x0800, ip_hdr(version=3) + b"p" * 8)],
        "ip4_hdr_too_short": [eth(0x0800, bytes([0x44]) + ok_ip[1:])],
        "ip4_bad_length": [eth(0x0800, ip_hdr(len=400) + b"p" * 94),
                           eth(0x0800, ip_hdr(ihl=15) + b"p" * 8)],
        "ip4_bad_checksum": [
            udp4(chksum=0x1234),
            Ether(src=MAC_A, dst=MAC_B) /
            IP(src="10.0.0.1", dst="10.0.1.1", options=[IPOption(b"\x01\x01\x01\x00")],
               chksum=0x4321) / UDP(),
        ],
        "ip6_too_short": [eth(0x86DD, raw_bytes(IPv6())[:30])],
        "ip6_bad_version": [eth(0x86DD, b"\x40" + raw_bytes(IPv6() / UDP())[1:])],
        "ip6_bad_length": [eth(0x86DD, raw_bytes(IPv6(plen=500) / UDP()))],
        "arp_too_short": [eth(0x0806, raw_bytes(ARP())[:20])],
    }


def good_cases():
    padded = udp4(payload=b"") / Raw(b"\x00" * 20)   # IPv4 total length excludes the pad
    padded_bytes = raw_bytes(udp4(payload=b"")) 
    return [
        (udp4(sport=1), None),                              # a 56-byte runt: forwarded
        (Ether(src=MAC_A, dst=MAC_B) / IP(src="10.0.0.1", dst="10.0.1.1",
                                          options=[IPOption(b"\x01\x01\x01\x00")]) /
         UDP() / Raw(b"opts"), None),                      # IPv4 options: forwarded
        (raw_bytes(padded_bytes) + b"\x00" * 18, padded_bytes),  # padding trimmed
        (bytes.fromhex("02000000000b02000000000a0020") + b"\xaa\xaa\x03" + b"l" * 29, None),
        (Ether(src=MAC_A, dst=BCAST) / ARP(psrc="10.0.0.1", pdst="10.0.0.2"), None),
    ]


def inputs():
    pkts = []
    goods = good_cases()
    for i, group in enumerate(bad_cases().values()):
        pkts += group
        if i < len(goods):
            pkts.append(goods[i][0])
    pkts += [g[0] for g in goods[len(bad_cases()):]]
    return {"p0": pkts}


def expected(inp):
    return {"p1": [out if out is not None else pkt for pkt, out in good_cases()]}


COUNTERS = {"rx." + k: len(v) for k, v in bad_cases().items()}
COUNTERS.update({"rx.ip4_options_seen": 1, "rx.ip4_trailer_trimmed": 1, "totals.tx": 5})
