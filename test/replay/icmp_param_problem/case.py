"""ICMP Parameter Problem (RFC 792 type 12, RFC 1812 4.3.3.5), modelled
independently of pipefwd.

A router walks the IPv4 options of what it forwards (RFC 791 layout: EOL
ends the list, NOP is one octet, every other option has a length octet >= 2
that stays within the header). When the walk fails, it drops the datagram
and answers 12/0 with the pointer at the offending option's type octet
(counted from the start of the IPv4 header, as Linux does), from the
ingress port's address, under the same suppression rules and rate limit as
the other errors (RFC 1812 4.3.2.7). Well-formed options are forwarded."""
import struct

from replaylib import Ether, IP, UDP, ICMP, Raw, BCAST, raw_bytes, icmp_error
from scapy.utils import checksum

R0, R1, NH1 = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01"
HOST, SRC, R0_IP = "02:00:00:00:00:aa", "192.168.0.9", "192.168.0.1"


def with_options(opts, dst="10.1.2.3", ttl=64, frag=0, l4=None, dst_mac=R0, proto=17):
    """A frame whose IPv4 header carries the option bytes @opts verbatim
    (scapy would tidy malformed options: the header is built by hand)."""
    assert len(opts) % 4 == 0
    l4 = raw_bytes(UDP(sport=1000, dport=53) / Raw(b"param-problem")) if l4 is None else l4
    ihl = 20 + len(opts)
    hdr = bytearray(raw_bytes(IP(src=SRC, dst=dst, ttl=ttl, proto=proto, frag=frag, id=77)))[:20]
    hdr[0] = 0x40 | ihl // 4
    hdr[2:4] = struct.pack("!H", ihl + len(l4))
    hdr[10:12] = b"\x00\x00"
    ip = bytes(hdr) + opts
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return Ether(src=HOST, dst=dst_mac, type=0x0800) / Raw(ip + l4)


# (frame, pointer): the options and where the walk fails
ANSWERED = [
    (with_options(b"\x07\x00\x00\x00"), 20),                    # length 0
    (with_options(b"\x94\x01\x00\x00"), 20),                    # length 1
    (with_options(b"\x01\x01\x44\x09\x00\x00\x00\x00"), 22),    # past the header
    (with_options(b"\x01\x01\x01\x07"), 23),                    # no length octet
    (with_options(b"\x94\x04\x00\x00\x07\x00\x00\x00", ttl=1), 24),   # before TTL
]
FORWARDED = [with_options(b"\x94\x04\x00\x00"),                 # Router Alert
             with_options(b"\x01\x01\x01\x00")]                 # NOPs then EOL
SUPPRESSED = {
    "icmp.icmp_for_nonfirst_fragment": [with_options(b"\x07\x00\x00\x00", frag=8)],
    "icmp.icmp_for_icmp_error": [
        with_options(b"\x07\x00\x00\x00",
                     l4=raw_bytes(ICMP(type=3, code=1) / IP(src="10.1.2.3", dst=SRC) / UDP()),
                     proto=1)],
}
# lpm drops an L2 broadcast before it looks at options: never reaches icmp
DROPPED = {"lpm.l3_l2bcast_ip_unicast": [with_options(b"\x07\x00\x00\x00", dst_mac=BCAST)]}


def inputs():
    pkts = [p for p, _ in ANSWERED] + FORWARDED
    for group in list(SUPPRESSED.values()) + list(DROPPED.values()):
        pkts += group
    return {"p0": pkts}


def forward(pkt):
    data = bytearray(raw_bytes(pkt))
    data[0:6] = bytes.fromhex(NH1.replace(":", ""))
    data[6:12] = bytes.fromhex(R1.replace(":", ""))
    ihl = (data[14] & 0xf) * 4
    data[22] -= 1                                                # TTL
    data[24:26] = b"\x00\x00"
    data[24:26] = struct.pack("!H", checksum(bytes(data[14:14 + ihl])))
    return bytes(data)


def expected(inp):
    return {"p0": [icmp_error(p, (12, 0, ptr), i, R0, R0_IP)
                   for i, (p, ptr) in enumerate(ANSWERED)],
            "p1": [forward(p) for p in FORWARDED]}


COUNTERS = {k: len(v) for k, v in list(SUPPRESSED.items()) + list(DROPPED.items())}
COUNTERS.update({
    "icmp.param_problem": len(ANSWERED),
    "lpm.ip4_bad_option": 0,
    "lpm.ip4_bad_option_to_icmp": len(ANSWERED) + 2,
    "icmp.icmp_ratelimited": 0,
    "totals.rx": len(inputs()["p0"]),
    "totals.tx": len(ANSWERED) + len(FORWARDED),
    "ports.p0.tx": len(ANSWERED),
    "ports.p1.tx": len(FORWARDED),
})
