"""Stateful acl as two instances: 48 UDP and 24 TCP sessions opened from
inside, their replies, and 16 unsolicited flows from outside, interleaved.
rx fans the packets out to acl.0 / acl.1 by the symmetric flow hash, so each
reply meets the session its opener created in the same instance (with an
asymmetric hash about half the replies would be denied). The output is the
single-acl model's; per-instance packet counts follow the documented hash
(stages/lib/pf_flowhash.h), re-implemented below, and both instances get work."""
import ipaddress
import os

import acl_model
from replaylib import tcp4, udp4

HERE = os.path.dirname(os.path.abspath(__file__))
N_INST = 2


def flows():
    out = []
    for i in range(48):
        c, s = f"10.0.{i // 16}.{i % 16 + 1}", f"8.8.{i % 4}.{i + 1}"
        cp, sp = 20000 + i, 53 + (i % 3)
        f = [udp4(src=c, dst=s, sport=cp, dport=sp, payload=b"q%02d" % i)]
        f += [udp4(src=s, dst=c, sport=sp, dport=cp, payload=b"r%02d-%d" % (i, k)) for k in range(3)]
        out.append(f)
    for i in range(24):
        c, s, cp = f"10.1.0.{i + 1}", f"1.1.{i}.1", 30000 + i
        out.append([tcp4(src=c, dst=s, sport=cp, dport=80, flags="S"),
                    tcp4(src=s, dst=c, sport=80, dport=cp, flags="SA"),
                    tcp4(src=c, dst=s, sport=cp, dport=80, flags="A"),
                    tcp4(src=s, dst=c, sport=80, dport=cp, flags="PA", payload=b"hello %d" % i),
                    tcp4(src=c, dst=s, sport=cp, dport=80, flags="FA"),
                    tcp4(src=s, dst=c, sport=80, dport=cp, flags="FA")])
    for i in range(16):
        out.append([udp4(src=f"9.9.9.{i + 1}", dst="10.0.0.1", sport=53, dport=5000 + i),
                    tcp4(src=f"9.9.8.{i + 1}", dst="10.1.0.1", sport=80, dport=6000 + i, flags="SA")])
    return out


def interleave(lists):
    """Round-robin over the flows: each keeps its own order."""
    out, i = [], 0
    while any(lists):
        for f in lists:
            if f:
                out.append(f.pop(0))
        i += 1
    return out


def inputs():
    return {"p0": interleave(flows())}


# ---- the documented flow hash (stages/lib/pf_flowhash.h), for per-instance counts
M64 = (1 << 64) - 1


def _mix(z):
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _pair(a, b, x):
    lo, hi = min(a, b), max(a, b)
    return _mix((lo * 0x9E3779B97F4A7C15 + hi + x * 0xC2B2AE3D27D4EB4F) & M64)


def instance(pkt, n):
    raw = bytes(pkt)
    ip = raw[14:34]
    a, b = int.from_bytes(ip[12:16], "little"), int.from_bytes(ip[16:20], "little")
    proto = ip[9]
    x = proto
    if proto in (6, 17):
        l4 = raw[34:38]
        p, q = l4[0] << 8 | l4[1], l4[2] << 8 | l4[3]
        x = proto << 32 | min(p, q) << 16 | max(p, q)
    return ((_pair(a, b, x) >> 32) * n) >> 32


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
_in = inputs()["p0"]
COUNTERS["acl.sessions"] = 72
for _k in range(N_INST):
    COUNTERS[f"acl.{_k}.packets"] = sum(1 for p in _in if instance(p, N_INST) == _k)
assert all(COUNTERS[f"acl.{k}.packets"] > len(_in) // 4 for k in range(N_INST))
