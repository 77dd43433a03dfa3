"""Default permit: everything passes but what the one deny rule matches."""
import os

import acl_model
from replaylib import tcp4, udp4

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    return {"p0": [udp4(dport=53), udp4(dport=54), tcp4(dport=53), udp4(sport=53, dport=1),
                   udp4(src="10.9.9.9", dport=53)]}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
