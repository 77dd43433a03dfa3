"""Ring overflow, deterministic: rx, xc and tx run in that order on one lcore.
net_pcap returns min(32, remaining) frames per rx burst; the rx->xc ring holds
15 (size 16), so each full burst of 32 keeps its first 15 frames and drops 17
as ring_full; xc then drains the ring (burst 15) before the next rx burst."""
from replaylib import udp4

N = 100
RX_BURST = 32
RING_CAPACITY = 15


def inputs():
    return {"p0": [udp4(sport=1000 + i, payload=i.to_bytes(2, "big") * 8) for i in range(N)]}


def expected(inp):
    out = []
    pkts = inp["p0"]
    for start in range(0, len(pkts), RX_BURST):
        out += pkts[start:start + RX_BURST][:RING_CAPACITY]
    return {"p1": out}


_DELIVERED = len(expected(inputs())["p1"])
COUNTERS = {"rx.ring_full": N - _DELIVERED, "rings.rx->xc.ring_full": N - _DELIVERED,
            "totals.tx": _DELIVERED, "totals.dropped": N - _DELIVERED}
