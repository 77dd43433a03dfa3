"""VLAN-tagged traffic: one 802.1Q tag (IPv4, ARP, non-IP) is forwarded
unchanged, VID 0 (priority tag) too; VID 4095 is dropped (vlan_unknown),
QinQ (0x88a8 outer, or two 0x8100 tags) is dropped (vlan_too_deep), and a
tagged IPv4 header with a bad checksum is still checked (ip4_bad_checksum)."""
from replaylib import ARP, Dot1Q, Ether, IP, UDP, Raw, MAC_A, MAC_B, BCAST, udp4


def good():
    return [udp4(vlan=10, sport=1000 + i) for i in range(10)] + [
        udp4(vlan=0, sport=999),
        Ether(src=MAC_A, dst=BCAST) / Dot1Q(vlan=20) / ARP(psrc="10.0.0.1", pdst="10.0.0.2"),
        Ether(src=MAC_A, dst=MAC_B) / Dot1Q(vlan=30, type=0x88B5) / Raw(b"x" * 50),
    ]


def bad():
    return {
        "vlan_unknown": [udp4(vlan=4095)],
        "vlan_too_deep": [
            Ether(src=MAC_A, dst=MAC_B, type=0x88A8) / Dot1Q(vlan=5) / IP(dst="10.0.0.9") / UDP(),
            Ether(src=MAC_A, dst=MAC_B) / Dot1Q(vlan=5) / Dot1Q(vlan=6) / IP(dst="10.0.0.9") / UDP(),
        ],
        "ip4_bad_checksum": [Ether(src=MAC_A, dst=MAC_B) / Dot1Q(vlan=10) /
                             IP(dst="10.0.0.9", chksum=0xBEEF) / UDP()],
    }


def inputs():
    pkts = good()
    for group in bad().values():
        pkts += group
    return {"p0": pkts}


def expected(inp):
    return {"p1": good()}


COUNTERS = {"rx.vlan_tagged": 14, "rx.vlan_unknown": 1, "rx.vlan_too_deep": 2,
            "rx.ip4_bad_checksum": 1, "totals.tx": 13}
