#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write bench pcaps for a 2-port L2 bridge whose flows cover N stations.

    /usr/bin/python3 scripts/gen_l2_bench.py N OUTDIR

OUTDIR/p0.pcap holds N/2 frames from stations L0..L(N/2-1) on p0, each to its
peer R_i; OUTDIR/p1.pcap the replies R_i -> L_i. Looped with net_pcap
infinite_rx=1, the first pass teaches the bridge all N MACs and every later
frame is a known-unicast lookup of one source and one destination among N.
Frames are 60-byte IPv4/UDP with a valid header checksum; only MACs vary.
"""
import os
import struct
import sys

import pcaplib


def ip_header():
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0,
                              bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    h[10:12] = struct.pack("!H", ~s & 0xFFFF)
    return bytes(h)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = int(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    tail = b"\x08\x00" + ip_header() + struct.pack("!HHHH", 1000, 2000, 26, 0) + b"\x00" * 18
    half = max(n // 2, 1)
    for port, (me, peer) in (("p0", (0x02, 0x06)), ("p1", (0x06, 0x02))):
        frames = (bytes([peer, 0]) + struct.pack(">I", i) + bytes([me, 0]) +
                  struct.pack(">I", i) + tail for i in range(half))
        pcaplib.write_pcap(os.path.join(out, port + ".pcap"), frames,
                           stamp=lambda i: (1700000000, 0))
    print(f"{out}: 2 x {half} frames, {2 * half} stations")


if __name__ == "__main__":
    main()
