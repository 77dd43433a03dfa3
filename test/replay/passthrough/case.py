"""Pass-through: IPv4 (UDP, TCP), IPv6, ARP and a non-IP EtherType cross
between two ports unchanged, in both directions; 60-byte runts count as info."""
from replaylib import ARP, Ether, IPv6, Raw, UDP, MAC_A, MAC_B, BCAST, tcp4, udp4


def inputs():
    p0 = [udp4(sport=1000 + i, payload=bytes([i]) * (18 + i)) for i in range(40)]
    p0 += [tcp4(sport=5000, flags="S"), tcp4(sport=5000, flags="A", payload=b"data")]
    p0 += [Ether(src=MAC_A, dst=MAC_B) / IPv6(src="2001:db8::1", dst="2001:db8::2") /
           UDP(sport=1, dport=2) / Raw(b"v6")]
    p0 += [Ether(src=MAC_A, dst=BCAST) / ARP(psrc="10.0.0.1", pdst="10.0.0.2")]
    p0 += [Ether(src=MAC_A, dst=MAC_B, type=0x88B5) / Raw(b"local-experimental" * 3)]
    p1 = [udp4(src_mac=MAC_B, dst_mac=MAC_A, src="10.0.1.1", dst="10.0.0.1", sport=2000 + i)
          for i in range(30)]
    return {"p0": p0, "p1": p1}


def expected(inp):
    # A cross-connect is the identity on bytes: p0's frames leave on p1 and back.
    return {"p1": list(inp["p0"]), "p0": list(inp["p1"])}


# 30 frames of p1 and most of p0's UDP frames are under 60 bytes (no padding).
def _runts():
    from replaylib import raw_bytes
    i = inputs()
    return sum(1 for p in i["p0"] + i["p1"] if len(raw_bytes(p)) < 60)


COUNTERS = {
    "totals.rx": 75,
    "totals.tx": 75,
    "ports.p0.rx": 45,
    "ports.p1.rx": 30,
    "ports.p0.tx": 30,
    "ports.p1.tx": 45,
    "rx.rx_runt": _runts(),
}
