"""lpm forwarding per RFC 1812, modelled independently of pipefwd.

Routes (routes.txt plus one inline /32): 10/8 -> r1 (p1), 10.20/16 -> r2 (p2),
10.20.30/24 -> r3 (p3), 10.20.30.40/32 -> r1 (p1); no default route. Hosts on
p0 send UDP to each prefix, to an unrouted address (ip4_no_route), with TTL
0/1 (ip4_ttl_expired) and 2 (leaves with TTL 1 and a full-recompute
checksum), with IP options (forwarded), to martian destinations (0/8, 127/8,
240/4: ip4_martian_dst; 255.255.255.255: ip4_bcast; 224/4:
ip4_mcast_unsupported), from martian sources (ip4_martian_src), to a MAC that
is not the router's (l3_mac_mismatch), and to p2's subnet broadcast
(ip4_directed_bcast)."""
import ipaddress

from replaylib import Ether, IP, UDP, Raw, BCAST, raw_bytes, udp4
from scapy.all import IPOption_NOP, IPOption_Router_Alert

PORT_MAC = {"p0": "02:00:00:00:00:10", "p1": "02:00:00:00:00:11",
            "p2": "02:00:00:00:00:12", "p3": "02:00:00:00:00:13"}
NEXTHOPS = {"r1": ("p1", "02:00:00:00:01:01"), "r2": ("p2", "02:00:00:00:01:02"),
            "r3": ("p3", "02:00:00:00:01:03")}
ROUTES = {"10.0.0.0/8": "r1", "10.20.0.0/16": "r2", "10.20.30.0/24": "r3",
          "10.20.30.40/32": "r1"}
HOST = "02:00:00:00:00:aa"
R0 = PORT_MAC["p0"]


def host(dst, ttl=64, sport=1000, src="192.168.0.9", dst_mac=R0, **kw):
    return udp4(src_mac=HOST, dst_mac=dst_mac, src=src, dst=dst, ttl=ttl, sport=sport, **kw)


def routed():
    out = []
    for i, dst in enumerate(["10.1.2.3", "10.20.1.1", "10.20.30.1", "10.20.30.40",
                             "10.99.0.7", "10.20.200.200", "10.20.30.254"]):
        out += [host(dst, sport=2000 + 10 * i + k) for k in range(3)]
    out.append(host("10.20.30.41", ttl=2, sport=3000))
    out.append(Ether(src=HOST, dst=R0) /
               IP(src="192.168.0.9", dst="10.20.5.5", ttl=30,
                  options=[IPOption_Router_Alert(), IPOption_NOP(), IPOption_NOP(),
                           IPOption_NOP(), IPOption_NOP()]) /
               UDP(sport=3001, dport=53) / Raw(b"with-options"))
    return out


def dropped():
    return {
        "ip4_no_route": [host("11.0.0.1"), host("192.168.1.1")],
        "ip4_ttl_expired": [host("10.1.2.3", ttl=1), host("10.1.2.3", ttl=0)],
        "ip4_martian_dst": [host("0.1.2.3"), host("127.0.0.1"), host("240.0.0.1")],
        "ip4_bcast": [host("255.255.255.255"), host("255.255.255.255", dst_mac=BCAST)],
        "ip4_mcast_unsupported": [host("224.0.0.5"), host("239.1.2.3", dst_mac="01:00:5e:01:02:03")],
        "ip4_martian_src": [host("10.1.2.3", src="127.0.0.1"), host("10.1.2.3", src="0.0.0.0"),
                            host("10.1.2.3", src="224.1.1.1"), host("10.1.2.3", src="255.255.255.255")],
        "l3_mac_mismatch": [host("10.1.2.3", dst_mac="02:00:00:00:00:11"),
                            host("10.1.2.3", dst_mac="02:00:00:00:99:99")],
        "l3_l2bcast_ip_unicast": [host("10.1.2.3", dst_mac=BCAST)],
        "ip4_directed_bcast": [host("172.16.2.255")],
    }


def inputs():
    pkts = routed()
    for group in dropped().values():
        pkts += group
    return {"p0": pkts}


def lookup(dst):
    best = None
    for prefix, nh in ROUTES.items():
        net = ipaddress.ip_network(prefix)
        if ipaddress.ip_address(dst) in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, nh)
    return best[1]


def forward(pkt):
    """RFC 1812 forwarding of one routed packet: TTL - 1, fresh checksum, new MACs."""
    p = Ether(raw_bytes(pkt))
    port, mac = NEXTHOPS[lookup(p[IP].dst)]
    p[Ether].src = PORT_MAC[port]
    p[Ether].dst = mac
    p[IP].ttl -= 1
    del p[IP].chksum
    return port, Ether(bytes(p))


def expected(inp):
    out = {}
    for pkt in routed():
        port, p = forward(pkt)
        out.setdefault(port, []).append(p)
    return out


_n_dropped = sum(len(v) for v in dropped().values())
COUNTERS = {f"lpm.{k}": len(v) for k, v in dropped().items()}
COUNTERS.update({
    "totals.rx": len(routed()) + _n_dropped,
    "totals.tx": len(routed()),
})
COUNTERS.update({f"ports.{port}.tx": len(pkts) for port, pkts in expected(None).items()})
