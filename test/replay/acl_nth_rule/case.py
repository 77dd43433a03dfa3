"""1000 distinct rules from a file (scripts/gen_acl_rules.py -n 1000 --variant
distinct; odd rules permit, even rules deny): packets that match the 1st,
50th, 100th and 1000th rule, and one that matches none (default deny).
The per-rule hit counters (gauges rule.<n>) name the rule that matched."""
import os

import acl_model
from replaylib import udp4

HERE = os.path.dirname(os.path.abspath(__file__))


def _src(i, host):
    return f"10.{(i >> 8) & 255}.{i & 255}.{host}"


def inputs():
    p0 = []
    for i in (1, 50, 100, 1000):
        p0 += [udp4(src=_src(i, h), sport=1000 + h) for h in (1, 2, 254)]
    p0 += [udp4(src="10.4.0.1"), udp4(src="11.0.1.1")]              # rule 1024 does not exist
    return {"p0": p0}


def expected(inp):
    return {"p1": acl_model.run(acl_model.from_topology(HERE), inp["p0"])}


_acl = acl_model.from_topology(HERE)
_out = acl_model.run(_acl, inputs()["p0"])
COUNTERS = acl_model.counters(_acl, len(inputs()["p0"]), len(_out))
COUNTERS["acl.rules"] = 1000
