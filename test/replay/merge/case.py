"""Fan-in: three ports, each with several flows of numbered packets, all
cross-connected to p3 through a pipelined layout (rx on one lcore, xc and tx
on another). Every packet arrives once; each flow keeps its order."""
from replaylib import udp4


def inputs():
    ports = {}
    for pi, port in enumerate(("p0", "p1", "p2")):
        pkts = []
        for seq in range(60):
            flow = seq % 4
            pkts.append(udp4(src=f"10.{pi}.0.{flow + 1}", dst="10.9.9.9", sport=1000 + flow,
                             dport=7, payload=seq.to_bytes(4, "big") * 4))
        ports[port] = pkts
    return ports


def expected(inp):
    # Everything goes to p3; the runner compares per-flow order only.
    return {"p3": inp["p0"] + inp["p1"] + inp["p2"], "p0": [], "p1": [], "p2": []}


COUNTERS = {"totals.rx": 180, "totals.tx": 180, "ports.p3.tx": 180, "xc.no_xconnect": 0}
