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


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
COUNTERS["acl.rules"] = 1000
