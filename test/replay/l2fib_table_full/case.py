"""Table full: table_size 4. Six sources on p0 to an unknown MAC: four are
learned, two are counted fib_full, all six are flooded. From p1 (whose
source cannot be learned either): a learned MAC is switched to p0, an
unlearned one is flooded, never dropped."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from l2fib_model import Bridge, counters, run  # noqa: E402
from replaylib import udp4  # noqa: E402

PORTS = ["p0", "p1", "p2"]
S = ["02:00:00:00:02:%02x" % i for i in range(1, 7)]
X, Y = "02:00:00:00:03:01", "02:00:00:00:03:02"


def bridge():
    return Bridge([("default", 0, PORTS)], table_size=4)


def inputs():
    return {"p0": [udp4(s, X, sport=i) for i, s in enumerate(S)],
            "p1": [udp4(Y, S[0], sport=10), udp4(Y, S[3], sport=11), udp4(Y, S[4], sport=12),
                   udp4(Y, S[5], sport=13)]}


def expected(inp):
    return run(bridge(), inp, PORTS)


_b = bridge()
run(_b, inputs(), PORTS)
COUNTERS = counters(_b, inputs(), extra={"l2.entries": 4})
