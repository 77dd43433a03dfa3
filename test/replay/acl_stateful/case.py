"""Stateful ACL: permit-reflect opens a session for the flow, both directions;
the replies pass without a rule lookup (session_permit), also when they are in
the same burst as the packet that opened the session; return traffic that has
no session is denied, and so is another port of the same hosts."""
import os

import acl_model
from replaylib import tcp4, udp4

HERE = os.path.dirname(os.path.abspath(__file__))
IN, OUT = "10.0.0.1", "8.8.8.8"


def inputs():
    p0 = [udp4(src=OUT, dst=IN, sport=53, dport=4000)]                  # no session yet
    p0 += [udp4(src=IN, dst=OUT, sport=4000, dport=53)]                 # opens it
    p0 += [udp4(src=OUT, dst=IN, sport=53, dport=4000, payload=bytes([i]) * 20) for i in range(3)]
    p0 += [udp4(src=OUT, dst=IN, sport=53, dport=4001)]                 # other flow
    c, s = "10.0.0.2", "1.1.1.1"
    p0 += [tcp4(src=c, dst=s, sport=1234, dport=80, flags="S"),
           tcp4(src=s, dst=c, sport=80, dport=1234, flags="SA"),
           tcp4(src=c, dst=s, sport=1234, dport=80, flags="A"),
           tcp4(src=s, dst=c, sport=80, dport=1234, flags="PA", payload=b"hello"),
           tcp4(src=c, dst=s, sport=1234, dport=80, flags="FA"),
           tcp4(src=s, dst=c, sport=80, dport=1234, flags="FA"),
           tcp4(src=s, dst="10.0.0.3", sport=80, dport=1234, flags="SA"),   # no session
           tcp4(src=c, dst=s, sport=1235, dport=81, flags="S")]            # no rule: default
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
COUNTERS["acl.sessions"] = 2
