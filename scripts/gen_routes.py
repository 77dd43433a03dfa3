#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate an lpm route file (and optionally matching traffic) for benchmarks.

    scripts/gen_routes.py -n 1000000 -o /tmp/1m.routes --nexthops 4 \
        --pcap /tmp/1m.pcap --packets 4096

Routes are unique unicast prefixes (never in 0/8, 127/8 or 224/3) with a
prefix-length mix shaped like a full Internet table (mostly /24, then /22,
/23, /21, /20 ...) plus a few longer than /24 as in provider tables, so
rte_lpm needs tbl8 groups. Next hops are named nh0..nhK-1 (define them under
the stage's nexthops:). The output is deterministic for a given --seed.

--pcap writes Ethernet/IPv4/UDP frames (64 bytes) to random addresses inside
random routes, addressed to --router-mac, for net_pcap infinite_rx=1.

--ipv6 writes IPv6 routes for the lpm6 stage instead: a prefix-length mix
shaped like the IPv6 BGP table (about half /48, then /32, /44, /40, /36,
/29 ...), clustered as real tables are: organisations hold a /32 (or /29)
in one of the RIR blocks of 2000::/3 and announce more-specifics inside it,
mostly runs of neighbouring /48s. --pcap then writes Ethernet/IPv6/UDP
frames of 64 bytes (--ipv6 -n 1000000 loads in lpm6 with EAL -m 1024).
"""
import argparse
import random
import socket
import struct
import sys

import pcaplib

# (prefix length, share in percent): roughly a 2023 IPv4 BGP table, with
# 2 % longer than /24 (customer and loopback routes of a provider table).
MIX = [(8, 0.01), (10, 0.02), (11, 0.05), (12, 0.1), (13, 0.2), (14, 0.4), (15, 0.6),
       (16, 1.5), (17, 1.0), (18, 1.8), (19, 3.3), (20, 4.5), (21, 5.0), (22, 10.5),
       (23, 9.0), (24, 60.0), (25, 0.3), (26, 0.3), (27, 0.3), (28, 0.3), (29, 0.3),
       (30, 0.2), (32, 0.3)]


def unicast(a):
    top = a >> 24
    return top != 0 and top != 127 and top < 224


def gen(n, seed):
    rnd = random.Random(seed)
    lens = [l for l, _ in MIX]
    weights = [w for _, w in MIX]
    seen = set()
    routes = []
    # Short prefixes have few distinct values: cap each length at what exists.
    while len(routes) < n:
        for l in rnd.choices(lens, weights, k=min(65536, 2 * (n - len(routes)))):
            a = rnd.getrandbits(32) & ((0xffffffff << (32 - l)) & 0xffffffff)
            if not unicast(a) or (a, l) in seen:
                continue
            seen.add((a, l))
            routes.append((a, l))
            if len(routes) == n:
                break
    return routes


def ip_str(a):
    return f"{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}"


def csum(data):
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def write_pcap(path, routes, count, router_mac, seed):
    rnd = random.Random(seed + 1)
    dmac = bytes(int(x, 16) for x in router_mac.split(":"))
    smac = bytes([2, 0, 0, 0, 0, 0xaa])

    def frames():
        for i in range(count):
            a, l = routes[rnd.randrange(len(routes))]
            dst = a | (rnd.getrandbits(32) & ((1 << (32 - l)) - 1))
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, i & 0xffff, 0, 64, 17, 0,
                             bytes([192, 168, 0, 9]), struct.pack("!I", dst))
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            udp = struct.pack("!HHHH", 1024 + (i & 0x3fff), 9, 26, 0) + bytes(18)
            yield dmac + smac + b"\x08\x00" + ip + udp
    pcaplib.write_pcap(path, frames(), stamp=lambda i: (1700000000, i % 1000000))


# (prefix length, share in percent) of an IPv6 BGP table (2024, rounded).
MIX6 = [(24, 0.3), (28, 1.0), (29, 3.0), (30, 0.5), (31, 0.3), (32, 13.0), (33, 1.2),
        (34, 0.8), (35, 0.6), (36, 4.0), (37, 0.5), (38, 1.0), (39, 0.5), (40, 6.0),
        (41, 0.5), (42, 1.5), (43, 0.7), (44, 8.0), (45, 1.2), (46, 3.0), (47, 2.5),
        (48, 48.0), (56, 0.6), (64, 0.3)]
RIR6 = [0x2001, 0x2400, 0x2600, 0x2800, 0x2a00, 0x2c00]


def gen6(n, seed):
    """@n unique IPv6 prefixes (as 128-bit ints, length), clustered per organisation."""
    rnd = random.Random(seed)
    lens = [l for l, _ in MIX6]
    weights = [w for _, w in MIX6]
    seen = set()
    routes = []
    while len(routes) < n:
        # One organisation: its block, then a handful of more-specifics in runs.
        rir = rnd.choice(RIR6)
        org = (rir << 112) | (rnd.getrandbits(20 if rir == 0x2001 else 20) << 96)
        if rir != 0x2001:
            org |= rnd.getrandbits(4) << 108
        batch = rnd.choices(lens, weights, k=rnd.randint(1, 16))
        base = rnd.getrandbits(16)
        for k, l in enumerate(sorted(batch)):
            if l <= 32:
                a = org & (((1 << 128) - 1) << (128 - l))
            else:
                # neighbouring blocks of the same length, from a random start
                sub = (base + k * rnd.randint(1, 3)) & ((1 << (l - 32)) - 1)
                a = org | (sub << (128 - l))
            if (a, l) in seen:
                continue
            seen.add((a, l))
            routes.append((a, l))
            if len(routes) == n:
                break
    return routes


def ip6_str(a):
    return socket.inet_ntop(socket.AF_INET6, a.to_bytes(16, "big"))


def write_pcap6(path, routes, count, router_mac, seed):
    rnd = random.Random(seed + 1)
    dmac = bytes(int(x, 16) for x in router_mac.split(":"))
    smac = bytes([2, 0, 0, 0, 0, 0xaa])
    src = socket.inet_pton(socket.AF_INET6, "2001:db8::9")

    def frames():
        for i in range(count):
            a, l = routes[rnd.randrange(len(routes))]
            dst = a | (rnd.getrandbits(128) & ((1 << (128 - l)) - 1))
            dst_b = dst.to_bytes(16, "big")
            udp = struct.pack("!HHHH", 1024 + (i & 0x3fff), 9, 10, 0) + bytes(2)
            ip = struct.pack("!IHBB", 6 << 28, len(udp), 17, 64) + src + dst_b
            # UDP checksum over the pseudo-header (RFC 8200 8.1)
            ph = src + dst_b + struct.pack("!IxxxB", len(udp), 17) + udp
            ck = csum(ph) or 0xffff
            udp = udp[:6] + struct.pack("!H", ck) + udp[8:]
            yield dmac + smac + b"\x86\xdd" + ip + udp
    pcaplib.write_pcap(path, frames(), stamp=lambda i: (1700000000, i % 1000000))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1000, help="number of routes (default 1000)")
    ap.add_argument("-o", "--output", default="-", help="route file (default stdout)")
    ap.add_argument("--nexthops", type=int, default=4, help="next hops nh0..nhK-1 (default 4)")
    ap.add_argument("--default", action="store_true", help="add 0.0.0.0/0 via nh0")
    ap.add_argument("--seed", type=int, default=1812)
    ap.add_argument("--pcap", help="also write traffic to routed destinations")
    ap.add_argument("--packets", type=int, default=4096, help="frames in --pcap")
    ap.add_argument("--router-mac", default="02:00:00:00:00:10",
                    help="destination MAC of the --pcap frames")
    ap.add_argument("--ipv6", action="store_true", help="IPv6 routes (and frames) for lpm6")
    args = ap.parse_args()
    v6 = args.ipv6
    routes = gen6(args.n, args.seed) if v6 else gen(args.n, args.seed)
    fmt = ip6_str if v6 else ip_str
    out = sys.stdout if args.output == "-" else open(args.output, "w")
    out.write(f"# {args.n} {'IPv6 ' if v6 else ''}routes, gen_routes.py{' --ipv6' if v6 else ''} "
              f"-n {args.n} --seed {args.seed}\n")
    if args.default:
        out.write("::/0 nh0\n" if v6 else "0.0.0.0/0 nh0\n")
    out.writelines(f"{fmt(a)}/{l} nh{i % args.nexthops}\n" for i, (a, l) in enumerate(routes))
    if out is not sys.stdout:
        out.close()
    if args.pcap:
        (write_pcap6 if v6 else write_pcap)(args.pcap, routes, args.packets, args.router_mac,
                                            args.seed)


if __name__ == "__main__":
    main()
