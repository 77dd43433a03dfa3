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


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
COUNTERS["acl.sessions"] = 8
