"""A full table of 640 sessions reclaims only among the next 256 slots.

t=0: 640 flows open sessions (slots 0..639, 20 bursts); t=20: the first 320
are refreshed (10 bursts; the 1-slot sweep cursor is now at 30); t=40: 32 new
flows. The last 320 sessions expired at 30, the first 320 live until 50. The
first new flow finds the table full and checks slots 30..285, all live:
refused (session_full), although 320 stale sessions exist; the second checks
286..541 and reclaims 222 expired ones: it and the rest are admitted. A model
that expired every stale session when full (the old test model) admits all
32: the counters tell the two apart."""
import os

import acl_model
from replaylib import timed, udp4

HERE = os.path.dirname(os.path.abspath(__file__))


def flow(i, t):
    return timed(udp4(src="10.0.%d.%d" % (i >> 8, i & 255), dst="8.8.8.8", sport=1000 + i,
                      dport=53), t)


def inputs():
    p0 = [flow(i, 0) for i in range(640)]
    p0 += [flow(i, 20) for i in range(320)]
    p0 += [timed(udp4(src="10.1.0.%d" % (j + 1), dst="8.8.8.8", sport=5000, dport=53), 40)
           for j in range(32)]
    return {"p0": p0, "p1": []}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
COUNTERS["acl.sessions_max"] = 640
