"""Session timeouts driven by the pcap clock (runtime: {clock: pcap}).
UDP: replies within 10 s of the last packet pass, the one 25 s later is
denied (the session expired). TCP: established after the handshake, so 58 s
of silence is fine (tcp_established 100 s); the server's FIN shortens the
timeout to tcp_transient (5 s), and its ACK 19 s later is denied."""
import os

import acl_model
from replaylib import tcp4, timed, udp4

HERE = os.path.dirname(os.path.abspath(__file__))
A, B, C, S = "10.0.0.1", "8.8.8.8", "10.0.0.2", "1.1.1.1"


def inputs():
    p0 = [timed(udp4(src=A, dst=B, sport=4000, dport=53), 0),
          timed(udp4(src=B, dst=A, sport=53, dport=4000), 1),
          timed(udp4(src=B, dst=A, sport=53, dport=4000), 5),
          timed(udp4(src=B, dst=A, sport=53, dport=4000), 30),           # expired at 15
          timed(tcp4(src=C, dst=S, sport=1234, dport=80, flags="S"), 40),
          timed(tcp4(src=S, dst=C, sport=80, dport=1234, flags="SA"), 41),
          timed(tcp4(src=C, dst=S, sport=1234, dport=80, flags="A"), 42),
          timed(tcp4(src=S, dst=C, sport=80, dport=1234, flags="PA", payload=b"x"), 100),
          timed(tcp4(src=S, dst=C, sport=80, dport=1234, flags="FA"), 101),
          timed(tcp4(src=S, dst=C, sport=80, dport=1234, flags="A"), 120)]   # expired at 106
    return {"p0": p0}


expected, COUNTERS = acl_model.single_stage_case(HERE, inputs)
