"""Hostile packets on bridged (L2) ports, untagged (domain lan: p0 p1 p2)
and tagged VLAN 10 (domain v10: p0 p2). The bridge never looks above L2.

Numbers are docs/reliability.md's cases. p0 is read first, then p1, p2
(l2fib_model.py), so later ports see what p0 taught the bridge.
- 11: unknown unicast is flooded to every other port of the domain, one
  reference-counted copy each (tx.flood_copies, totals.replicas exact);
  the frames below go to unknown D, so each is a flood.
- 27: TTL 1 and TTL 0 bridged: forwarded unchanged (TTL is checked only
  when routing); 28: LSRR and a bad option length bridged unchanged;
  13: an L2 broadcast carrying unicast IPv4 is an ordinary broadcast here;
  17: EtherTypes a router would refuse (0xAAAA, IPv6, ARP) are bridged.
  Each untagged and on VLAN 10 (tag kept).
- 9: 01:80:c2:00:00:00-0f never forwarded, tagged too (l2_reserved_dst);
  01:80:c2:00:00:10 is outside the block (flooded).
- 10: A2 learned on p0 in v10; C on p0 in v10 sending to A2 is dropped
  (l2_same_port); the same MAC in lan is unknown there (flooded).
- 39: MAC flood: 2 x table_size (16) sources from p0: the table stays at
  its cap (8, the static entry included) and the excess is counted
  (fib_full) while every frame is still flooded; afterwards a known MAC is
  still switched to its one port and the static entry still holds (p1 -> S
  goes to p2 only)."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import Ether, Dot1Q, IP, IPv6, ARP, UDP, Raw, BCAST, raw_bytes, udp4  # noqa: E402

PORTS = ["p0", "p1", "p2"]
A, A2, C, D, E = ("02:00:00:00:00:0a", "02:00:00:00:00:a2", "02:00:00:00:00:0c",
                  "02:00:00:00:00:0d", "02:00:00:00:00:0e")
S = "02:00:00:00:05:05"                      # static on p2 (lan)
FLOOD = ["02:00:00:%02x:%02x:%02x" % (0x10 + i, (i * 37) & 0xff, (i * 101) & 0xff)
         for i in range(16)]


def tag(pkt, vid):
    b = raw_bytes(pkt)
    return Ether(b[:12] + struct.pack("!HH", 0x8100, vid) + b[12:])


def with_opts(pkt, opts):
    """Splice raw IPv4 option bytes into an untagged Ethernet/IPv4 frame."""
    b = bytearray(raw_bytes(pkt))
    b[34:34] = opts
    b[14] = 0x40 | (20 + len(opts)) // 4
    struct.pack_into("!H", b, 16, len(b) - 14)
    struct.pack_into("!H", b, 24, 0)
    h = bytes(b[14:34 + len(opts)])
    s = sum(struct.unpack("!%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    struct.pack_into("!H", b, 24, ~s & 0xffff)
    return Ether(bytes(b))


def odd_frames():
    """Cases 27, 28, 13, 17 from A to unknown D (each flooded)."""
    return [
        udp4(A, D, ttl=1, sport=1), udp4(A, D, ttl=0, sport=2),                 # 27
        with_opts(udp4(A, D, sport=3), b"\x83\x07\x04\x0a\x01\x02\x03\x00"),   # 28 LSRR
        with_opts(udp4(A, D, sport=4), b"\x44\x00\x00\x00"),                   # 28 len 0
        udp4(A, BCAST, dst="10.0.1.1", sport=5),                                # 13
        Ether(src=A, dst=D, type=0xAAAA) / Raw(b"\0" * 46),                     # 17
        Ether(src=A, dst=D) / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP() / Raw(b"v6"),
        Ether(src=A, dst=BCAST) / ARP(op=1, hwsrc=A, psrc="10.0.0.1", pdst="10.0.0.2"),
    ]


def inputs():
    p0 = odd_frames() + [tag(p, 10) for p in odd_frames()]
    # 9: reserved destinations, untagged and tagged; 01:80:c2:00:00:10 is not reserved
    p0 += [udp4(E, "01:80:c2:00:00:00", sport=20), udp4(E, "01:80:c2:00:00:0e", sport=21),
           udp4(E, "01:80:c2:00:00:0f", sport=22, vlan=10),
           udp4(E, "01:80:c2:00:00:10", sport=23, vlan=10)]
    # 10: A2 then C behind p0 in v10; C -> A2 is filtered; in lan A2 is unknown
    p0 += [udp4(A2, D, sport=30, vlan=10), udp4(C, A2, sport=31, vlan=10),
           udp4(C, A2, sport=32)]
    # 39: 16 sources (2 x table_size) to unknown D
    p0 += [udp4(m, D, sport=40 + i) for i, m in enumerate(FLOOD)]
    # 39: afterwards: known A switched to p0 only, static S to p2 only; tagged A to p0
    p1 = [udp4(D, A, sport=60), udp4(D, S, sport=61)]
    p2 = [udp4(D, A, sport=62, vlan=10)]
    return {"p0": p0, "p1": p1, "p2": p2}


def bridge():
    return Bridge([("lan", 0, PORTS), ("v10", 10, ["p0", "p2"])], table_size=8,
                  static=[(S, "p2", "lan")])


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs(), extra={"l2.entries": 8})
