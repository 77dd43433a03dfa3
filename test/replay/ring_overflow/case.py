"""A ring smaller than the rx burst, between stages on one lcore: the edge goes
direct (rx hands each burst of up to 32 straight to xc, xc to tx), the ring is
never used, so nothing overflows: every frame is forwarded, in order, and the
ring counts them all as `direct` with nothing enqueued. (Overflow of a ring
between lcores, counted as ring_full on the producer and the ring, is the
fault_ring_full test.)"""
from replaylib import udp4

N = 100


def inputs():
    return {"p0": [udp4(sport=1000 + i, payload=i.to_bytes(2, "big") * 8) for i in range(N)]}


def expected(inp):
    return {"p1": list(inp["p0"])}


COUNTERS = {"rx.ring_full": 0, "rings.rx->xc.ring_full": 0, "rings.rx->xc.enqueued": 0,
            "rings.rx->xc.direct": N, "totals.tx": N, "totals.dropped": 0}
