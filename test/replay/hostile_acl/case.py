"""Hostile L4 on a routed path with an ACL: rx -> lpm -> acl -> tx.

Rules: deny udp dport 53, permit tcp dport 80, permit udp dport 54,
default deny; non-first fragments match port rules on protocol only (the
acl default, as VPP). Every packet is sent untagged and with a VID 0
priority tag (case 14: routed as untagged, the tag does not leave).
docs/reliability.md cases:
- 29: fragments are forwarded without reassembly: a first UDP fragment to
  port 53 is denied by its ports, a non-first UDP fragment by protocol
  (rule 1); TCP first and non-first fragments are permitted by rule 2.
- 30: the RFC 1858 attacks on the "permit tcp dport 80" rule never reach
  the acl: fragment offset 1 (lpm.ip4_frag_offset_one) and a first
  fragment with only 8 B of TCP (lpm.ip4_tiny_fragment).
- 36: TCP with data offset 1 or 15, and a 4-byte UDP header, do not match
  the port permits (acl.l4_malformed) and meet the default deny.
- 37: zero-length UDP (UDP length 8) to port 54 is permitted.
Expected: lpm's drops are modelled here; what is left goes through
scripts/acl_model.py, then is routed (TTL - 1, full checksum, next-hop
MACs, tag removed)."""
import os
import struct

import acl_model
from replaylib import Ether, IP, TCP, UDP, Raw, raw_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
R0, R1, NH1, HOST = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01", "02:00:00:00:00:aa"


def ip(proto, payload, **kw):
    return Ether(src=HOST, dst=R0) / IP(src="192.168.0.9", dst="10.0.1.1", proto=proto, **kw) / payload


def tagged(pkt, vid):
    b = raw_bytes(pkt)
    return Ether(b[:12] + struct.pack("!HH", 0x8100, vid) + b[12:])


def both(pkts):
    return [p for pkt in pkts for p in (pkt, tagged(pkt, 0))]


def reach_acl():
    """Packets lpm forwards to the acl."""
    tcp80 = bytes(TCP(sport=1000, dport=80, flags="S"))
    return both([
        ip(17, UDP(sport=1000, dport=53) / Raw(b"q" * 24), flags="MF", id=1),   # 29 first: deny
        ip(17, Raw(b"f" * 16), frag=3, id=1),                                  # 29 non-first: deny
        ip(6, Raw(tcp80 + b"d" * 4), flags="MF", id=2),                         # 29 first: permit
        ip(6, Raw(b"f" * 16), frag=3, id=2),                                   # 29 non-first: permit
        ip(6, TCP(sport=1, dport=80, dataofs=1)),                              # 36 doff 1
        ip(6, TCP(sport=1, dport=80, dataofs=15)),                             # 36 doff 15
        ip(17, Raw(bytes([3, 232, 0, 54]))),                                   # 36 4-byte UDP
        ip(17, UDP(sport=1000, dport=54)),                                     # 37 empty UDP
    ])


def lpm_dropped():
    tcp80 = bytes(TCP(sport=1000, dport=80, flags="S"))
    return {
        "lpm.ip4_frag_offset_one": both([ip(6, Raw(b"\0" * 16), frag=1, id=3)]),
        "lpm.ip4_tiny_fragment": both([ip(6, Raw(tcp80[:8]), flags="MF", id=4)]),
    }


def inputs():
    return {"p0": reach_acl() + [p for v in lpm_dropped().values() for p in v], "p1": []}


def cksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def route(pkt):
    b = bytearray(raw_bytes(pkt))
    if b[12:14] == b"\x81\x00":
        del b[12:16]
    h = bytearray(b[14:])
    h[8] -= 1
    h[10:12] = b"\0\0"
    struct.pack_into("!H", h, 10, cksum(bytes(h[:(h[0] & 15) * 4])))
    mac = lambda m: bytes.fromhex(m.replace(":", ""))  # noqa: E731
    return Ether(mac(NH1) + mac(R1) + b[12:14] + bytes(h))


def expected(inp):
    return {"p0": [], "p1": [route(p) for p in acl_model.run(acl_model.from_topology(HERE),
                                                             reach_acl())]}


def _counters():
    acl = acl_model.from_topology(HERE)
    out = acl_model.run(acl, reach_acl())
    c = acl_model.counters(acl, len(reach_acl()), len(out))
    c.update({k: len(v) for k, v in lpm_dropped().items()})
    c.update({"totals.rx": len(inputs()["p0"]), "ports.p1.tx": len(out), "ports.p0.tx": 0,
              "rx.vlan_tagged": len(inputs()["p0"]) // 2})
    return c


COUNTERS = _counters()
