#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A route source that never pauses still shows its progress (issue 30 item 9).

    /usr/bin/python3 test/netns/fpm_stream.py --pipefwd build/app/pipefwd

pipefwd runs in a namespace of its own with an FPM source (no daemon: this
test speaks FPM as zebra's dplane_fpm_nl does). A feeder sends 4096 blackhole
routes, then withdraws and announces them again back to back until told to
stop, faster than pipefwd applies them, so the stream never pauses. Meanwhile
/pipefwd/sources must move: the route thread reads a bounded amount per
wake-up and publishes between reads; it used to read until the socket was
empty, and showed nothing (nor ran its timers, nor served another source)
until the stream paused. At the end every route is there once and pipefwd
exits 0 with the accounting line exact. Needs root and ip: skipped without.
"""
import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netnslib as nl  # noqa: E402
from netnslib import check, wait_for  # noqa: E402

PFX = os.environ.get("PF_NETNS_PREFIX", "pfs%04x" % (os.getpid() & 0xffff))
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-fpm")
N = 4096

TOPO = """\
eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: { device: "net_null0,no-rx=1", mac: "02:00:00:00:00:10", ipv4: 10.1.0.1/24 }
stages:
  rx: { type: rx, ports: [p0], next: { ipv4: lpm } }
  lpm: { type: lpm, learnt: { routes: 8192, nexthops: 64, groups: 8, tbl8: 16 },
         next: { out: tx } }
  tx: { type: tx, ports: [p0] }
route_sources:
  feed: { type: fpm, listen: "127.0.0.1:2620", grace: 60 }
lcores:
  1: [rx, lpm, tx]
"""

# The feeder, inside the namespace: N blackhole routes (RTM_NEWROUTE, type 6),
# then delete + add of all of them, over and over, until its stdin closes.
FEEDER = r"""
import socket, struct, sys, threading, time
n = int(sys.argv[1])
stop = threading.Event()
def msg(new, i):
    attrs = struct.pack("=HH", 8, 1) + struct.pack("!I", (100 << 24) | (i << 8))
    body = struct.pack("=BBBBBBBBI", 2, 24, 0, 0, 254, 186, 0, 6, 0) + attrs
    return struct.pack("=IHHII", 16 + len(body), 24 if new else 25,
                       0x501 if new else 1, i, 0) + body
def frames(msgs):
    out, cur = [], b""
    for m in msgs:
        if len(cur) + len(m) > 60000:
            out.append(struct.pack("!BBH", 1, 1, len(cur) + 4) + cur)
            cur = b""
        cur += m
    return b"".join(out) + struct.pack("!BBH", 1, 1, len(cur) + 4) + cur
add = frames(msg(True, i) for i in range(n))
dele = frames(msg(False, i) for i in range(n))
s = socket.create_connection(("127.0.0.1", 2620), 10)
s.settimeout(None)
s.sendall(add)
print("streaming", flush=True)
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    s.sendall(dele + add)
print("done", flush=True)
time.sleep(30)      # the connection stays until the test is done
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    args = ap.parse_args()
    if not nl.can_run("ip"):
        return 77
    tmp = tempfile.mkdtemp(prefix="pf_fpms_")
    ctl = nl.Ctl(FILE_PREFIX)
    wire = nl.Wire(PFX)
    proc = feeder = None
    try:
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO)
        log = os.path.join(tmp, "pipefwd.log")
        nl.sh("ip", "link", "set", "lo", "up", ns=wire.ns_w)
        proc = nl.start_pipefwd(args.pipefwd, wire.ns_w, topo, FILE_PREFIX, log)
        if not check(wait_for(lambda: ctl.source("feed").get("state") == "listening", 30),
                     "the FPM source listens"):
            print(open(log).read()[-3000:])
            return 1
        feeder = subprocess.Popen(["ip", "netns", "exec", wire.ns_w, sys.executable, "-c",
                                   FEEDER, str(N)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        check(feeder.stdout.readline().strip() == "streaming", "the feeder streams")
        # While the stream runs (it stops only when told): the published
        # operations count moves. Up to 8 samples, until it moved twice.
        seen = []
        for _ in range(8):
            time.sleep(0.3)
            seen.append(ctl.source("feed").get("operations", 0))
            if sum(1 for a, b in zip(seen, seen[1:]) if b > a) >= 2:
                break
        moves = sum(1 for a, b in zip(seen, seen[1:]) if b > a)
        check(moves >= 2, "while the stream never pauses, the source's operations move: %s"
              % seen)
        feeder.stdin.close()
        check(feeder.stdout.readline().strip() == "done", "the feeder stopped")
        src = {}
        ok = wait_for(lambda: (src.update(ctl.source("feed")) or
                               src.get("last_update_ms", 0) > 300), 30)
        check(ok and src.get("routes_ipv4") == N and src.get("refused") == 0,
              "the stream over: %d routes, each once (%s)" % (src.get("routes_ipv4", -1), src))
        feeder.kill()
        feeder.wait()
        feeder = None
        check(nl.stop_pipefwd(proc, log), "pipefwd exits 0, accounting exact")
        proc = None
    finally:
        if feeder is not None:
            feeder.kill()
            feeder.wait()
        nl.teardown(proc, wire, tmp)
    return 1 if nl.failures else 0


if __name__ == "__main__":
    sys.exit(main())
