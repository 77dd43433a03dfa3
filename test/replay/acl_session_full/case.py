"""A session table of 8: ten new flows, the last two are refused and counted
(session_full, a drop reason); replies of admitted flows pass, replies of the
refused ones are denied (no session, no rule)."""
import os

import acl_model
from replaylib import udp4

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    p0 = [udp4(src="10.0.0.1", dst="8.8.8.8", sport=4000 + i, dport=53) for i in range(10)]
    p0 += [udp4(src="8.8.8.8", dst="10.0.0.1", sport=53, dport=4000 + i) for i in (0, 7, 8, 9)]
    return {"p0": p0}


def expected(inp):
    return {"p1": acl_model.run(acl_model.from_topology(HERE), inp["p0"])}


_acl = acl_model.from_topology(HERE)
_out = acl_model.run(_acl, inputs()["p0"])
COUNTERS = acl_model.counters(_acl, len(inputs()["p0"]), len(_out))
COUNTERS["acl.sessions"] = 8
