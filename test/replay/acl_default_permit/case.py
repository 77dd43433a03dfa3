"""Default permit: everything passes but what the one deny rule matches."""
import os

import acl_model
from replaylib import tcp4, udp4

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    return {"p0": [udp4(dport=53), udp4(dport=54), tcp4(dport=53), udp4(sport=53, dport=1),
                   udp4(src="10.9.9.9", dport=53)]}


def expected(inp):
    return {"p1": acl_model.run(acl_model.from_topology(HERE), inp["p0"])}


_acl = acl_model.from_topology(HERE)
_out = acl_model.run(_acl, inputs()["p0"])
COUNTERS = acl_model.counters(_acl, len(inputs()["p0"]), len(_out))
