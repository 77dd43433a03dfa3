#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the bundled sample traffic for `make run` (conf/pcap/sample-p[0-3].pcap).

    /usr/bin/python3 scripts/gen_sample.py conf/pcap

A mix a data plane sees: many UDP/TCP flows, ARP, IPv6, a few malformed
frames (so the summary shows named drop reasons) and VLAN-tagged frames.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replaylib import (ARP, Ether, IP, IPv6, UDP, Raw, BCAST, MAC_A, MAC_B, raw_bytes,  # noqa: E402
                       tcp4, udp4, write_pcap)

ROUTER_P0 = "02:00:00:00:00:10"
ROUTER_P1 = "02:00:00:00:00:11"


def port0():
    pkts = []
    for i in range(2000):
        flow = i % 64
        dst = f"10.1.{flow // 16}.{flow % 16 + 1}" if flow % 8 else f"10.2.0.{flow}"
        if i % 5 == 0:
            pkts.append(tcp4(src_mac=MAC_A, dst_mac=ROUTER_P0, src="192.168.0.2", dst=dst,
                             sport=30000 + flow, dport=443, flags="A", payload=b"t" * 20))
        else:
            pkts.append(udp4(src_mac=MAC_A, dst_mac=ROUTER_P0, src="192.168.0.2", dst=dst,
                             sport=20000 + flow, dport=53, payload=b"u" * (18 + flow)))
    pkts.append(Ether(src=MAC_A, dst=BCAST) / ARP(hwsrc=MAC_A, psrc="192.168.0.2",
                                                  pdst="192.168.0.1"))
    pkts.append(Ether(src=MAC_A, dst=ROUTER_P0) / IPv6(src="2001:db8::2", dst="2001:db8:1::1") /
                UDP() / Raw(b"v6"))
    pkts.append(udp4(src_mac=MAC_A, dst_mac=ROUTER_P0, src="192.168.0.2", dst="10.1.0.1", ttl=1))
    pkts.append(udp4(src_mac=MAC_A, dst_mac=ROUTER_P0, src="192.168.0.2", dst="10.1.0.1",
                     chksum=0xdead))
    pkts.append(raw_bytes(udp4())[:12])
    return pkts


def port1():
    """Answers from the lab to the LAN's UDP flows (in flow order, so each
    session exists when its answer arrives), then a few unsolicited packets
    that the stateful ACL must refuse."""
    pkts = []
    for rnd in range(16):
        for flow in range(64):
            if flow % 8 == 0:
                continue            # those flows went to 10.2.0.0/16: no route, no session
            src = f"10.1.{flow // 16}.{flow % 16 + 1}"
            pkts.append(udp4(src_mac=MAC_B, dst_mac=ROUTER_P1, src=src, dst="192.168.0.2",
                             sport=53, dport=20000 + flow, payload=b"r" * 30))
    pkts += [Ether(src=MAC_B, dst=ROUTER_P1) / IP(src="10.1.0.99", dst="192.168.0.2") /
             UDP(sport=53, dport=9) for _ in range(3)]
    return pkts


def bridge_port(side):
    """Stations on an L2 segment: ARP broadcasts first, then unicast between
    stations on both bridge ports (unknown at first: flooded; then learned)."""
    here = [f"02:00:00:00:{side}{i}:01" for i in range(4)]
    there = [f"02:00:00:00:{1 - side}{i}:01" for i in range(4)]
    pkts = [Ether(src=m, dst=BCAST) / ARP(hwsrc=m, psrc=f"172.16.{side}.{i + 1}",
                                          pdst="172.16.0.254") for i, m in enumerate(here)]
    for i in range(400):
        src, dst = here[i % 4], there[(i // 4) % 4]
        pkts.append(udp4(src_mac=src, dst_mac=dst, src=f"172.16.{side}.{i % 4 + 1}",
                         dst=f"172.16.{1 - side}.{(i // 4) % 4 + 1}", sport=4000 + i % 4,
                         dport=5000, payload=b"b" * 26))
    return pkts


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "conf/pcap"
    os.makedirs(out, exist_ok=True)
    write_pcap(os.path.join(out, "sample-p0.pcap"), port0())
    write_pcap(os.path.join(out, "sample-p1.pcap"), port1())
    write_pcap(os.path.join(out, "sample-p2.pcap"), bridge_port(0))
    write_pcap(os.path.join(out, "sample-p3.pcap"), bridge_port(1))


if __name__ == "__main__":
    main()
