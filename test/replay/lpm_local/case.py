"""lpm as a gateway: ARP requests for the ingress port's own address are
answered in place (arp_reply); requests for other addresses (including the
router's address on the other port) are dropped (arp_not_for_us), requests
whose sender MAC is broadcast, multicast or zero get no answer
(arp_bad_sender_mac), ARP replies
are ignored (arp_ignored: next-hop MACs are static). IPv4 to any router
address counts as local; ICMP echo requests are answered out the ingress port
from the pinged address (icmp_echo_reply, whatever their TTL), anything else
is dropped (ip4_local_unsupported); a bad ICMP checksum is dropped
(icmp_bad_checksum). Everything else follows the default route out p1."""
from replaylib import ARP, Ether, ICMP, IP, Raw, BCAST, raw_bytes, udp4

PORT = {"p0": ("02:00:00:00:00:10", "192.168.0.1"), "p1": ("02:00:00:00:00:11", "10.1.0.254")}
UPSTREAM = "02:00:00:00:01:01"
H0 = ("02:00:00:00:00:aa", "192.168.0.9")
H1 = ("02:00:00:00:00:bb", "10.1.0.7")


def arp_req(h, target, dst=BCAST, op=1):
    return Ether(src=h[0], dst=dst) / ARP(op=op, hwsrc=h[0], psrc=h[1], pdst=target,
                                         hwdst="00:00:00:00:00:00")


def ping(h, port, dst, seq, ttl=64, chksum=None):
    icmp = ICMP(type=8, id=0x4242, seq=seq)
    if chksum is not None:
        icmp.chksum = chksum
    return (Ether(src=h[0], dst=PORT[port][0]) / IP(src=h[1], dst=dst, ttl=ttl, id=seq) /
            icmp / Raw(bytes(range(seq, seq + 32))))


def answered():
    """(ingress port, packet) pairs the router answers."""
    return [("p0", arp_req(H0, "192.168.0.1")),
            ("p0", arp_req(H0, "192.168.0.1", dst=PORT["p0"][0])),   # unicast refresh
            ("p1", arp_req(H1, "10.1.0.254")),
            ("p0", ping(H0, "p0", "192.168.0.1", 1)),
            ("p0", ping(H0, "p0", "192.168.0.1", 2, ttl=1)),
            ("p0", ping(H0, "p0", "10.1.0.254", 3)),                 # other port's address
            ("p1", ping(H1, "p1", "10.1.0.254", 4))]


def routed():
    return [udp4(src_mac=H0[0], dst_mac=PORT["p0"][0], src=H0[1], dst=d, sport=100 + i)
            for i, d in enumerate(["8.8.8.8", "1.1.1.1", "10.1.0.7", "203.0.113.5"])]


def dropped():
    return {
        "arp_not_for_us": [arp_req(H0, "192.168.0.77"), arp_req(H0, "10.1.0.254")],
        "arp_ignored": [arp_req(H0, "192.168.0.9", op=2)],
        # a reply would go to the sender MAC: never to a group or zero address
        "arp_bad_sender_mac": [Ether(src=H0[0], dst=BCAST) /
                               ARP(op=1, hwsrc=m, psrc=H0[1], pdst="192.168.0.1",
                                   hwdst="00:00:00:00:00:00")
                               for m in (BCAST, "01:00:5e:00:00:01", "00:00:00:00:00:00")],
        "ip4_local_unsupported": [udp4(src_mac=H0[0], dst_mac=PORT["p0"][0], src=H0[1],
                                       dst="192.168.0.1", dport=53)],
        "icmp_bad_checksum": [ping(H0, "p0", "192.168.0.1", 9, chksum=0x1234)],
        "ip4_directed_bcast": [udp4(src_mac=H0[0], dst_mac=PORT["p0"][0], src=H0[1],
                                    dst="192.168.0.255")],
        "l3_l2bcast_ip_unicast": [udp4(src_mac=H0[0], dst_mac=BCAST, src=H0[1], dst="8.8.8.8")],
    }


def inputs():
    out = {"p0": [], "p1": []}
    for port, p in answered():
        out[port].append(p)
    out["p0"] += routed()
    for group in dropped().values():
        out["p0"] += group
    return out


def answer(port, pkt):
    mac, ip = PORT[port]
    p = Ether(raw_bytes(pkt))
    if ARP in p:
        req = p[ARP]
        return Ether(src=mac, dst=req.hwsrc) / ARP(op=2, hwsrc=mac, psrc=ip, hwdst=req.hwsrc,
                                                   pdst=req.psrc)
    p[Ether].dst, p[Ether].src = p[Ether].src, mac
    p[IP].src, p[IP].dst = p[IP].dst, p[IP].src
    p[IP].ttl = 64
    del p[IP].chksum
    p[ICMP].type = 0
    del p[ICMP].chksum
    return Ether(bytes(p))


def forward(pkt):
    p = Ether(raw_bytes(pkt))
    p[Ether].src, p[Ether].dst = PORT["p1"][0], UPSTREAM
    p[IP].ttl -= 1
    del p[IP].chksum
    return Ether(bytes(p))


def expected(inp):
    out = {"p0": [], "p1": []}
    for port, p in answered():
        out[port].append(answer(port, p))
    out["p1"] += [forward(p) for p in routed()]
    return out


COUNTERS = {f"lpm.{k}": len(v) for k, v in dropped().items()}
COUNTERS.update({
    "lpm.arp_reply": 3,
    "lpm.icmp_echo_reply": 4,
    "lpm.local": 4 + 1 + 1,            # echo requests, the UDP to 192.168.0.1, the bad ping
    "ports.p0.tx": 5,
    "ports.p1.tx": 2 + len(routed()),
    "totals.rx": len(answered()) + len(routed()) + sum(len(v) for v in dropped().values()),
    "totals.tx": len(answered()) + len(routed()),
})
