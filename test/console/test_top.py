#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd-ctl top on a terminal (curses), driven in a tmux pane with
send-keys and read with capture-pane (issue 33 items 4 and 6).

pipefwd runs rx on lcore 1 into a ring to xc and tx on lcore 2 (xc -> tx is
direct), from a looping pcap where one frame in 8 has a bad IPv4 checksum
(rx drops it: a TOP DROPS line). Checked:
 - 80x24: a frame on the alternate screen; no line wider
   than the pane; the rings table is wider than 80 columns and its lines end
   in the '>' marker, the status bar says so; Right scrolls to the cut
   columns ('<' first), Home back; at 80x10 the status bar counts the lines
   below and Page Down shows them;
 - 200x50: the whole frame, no marker;
 - h: the keys and the columns, 'direct' explained; any key closes it;
 - s: sort by cost puts the stages in falling cycles/packet order;
 - p: PAUSED, the frame stays for a second; p again: it moves;
 - c: pipefwd's counters cleared (its stage counters fall);
 - q: exit 0, the alternate screen left;
 - pipefwd stopping under top: exit 1 with 'pipefwd-ctl: top ends: ...',
   no traceback, the alternate screen left.

usage: test_top.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import (XC_TOPOLOGY, Tmux, dpdk_rundir, finish, ipv4_udp,  # noqa: E402
                    stop_pipefwd, write_pcap)

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TAG = "ctop_%d" % os.getpid()
FAILS = []
TOPO = XC_TOPOLOGY.replace("  1: [rx, xc, tx]\n", "  1: [rx]\n  2: [xc, tx]\n")


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def frames(n):
    eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
    out = []
    for i in range(n):
        f = bytearray(ipv4_udp(eth, [10, 0, 0, 1], [10, 0, 1, i % 200 + 1], i, 1000, 2000,
                               bytes(18)))
        if i % 8 == 3:
            f[24] ^= 0xff       # the IPv4 header checksum
        out.append(bytes(f))
    return out


def stage_rows(scr):
    """{stage: row cells} of the STAGE table on the screen."""
    lines = scr.split("\n")
    i = next((k for k, l in enumerate(lines) if l.startswith("STAGE")), None)
    rows = {}
    for l in lines[i + 1:] if i is not None else []:
        if not l.strip():
            break
        rows[l.split()[0]] = l.split()
    return rows


def costs(scr):
    """The cyc/pkt column of the STAGE table, top to bottom."""
    return [float(r[4]) if len(r) > 4 and re.match(r"^[\d.]+$", r[4]) else 0.0
            for r in stage_rows(scr).values()]


def ctl_json(prefix, *args):
    r = subprocess.run([CTL, "--file-prefix", prefix, "--json"] + list(args),
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def keys_and_sizes(prefix):
    tm = Tmux(TAG + "_keys", "top", "%s --file-prefix %s top --interval 0.5" % (CTL, prefix),
              80, 24)
    try:
        scr = tm.wait_for("TOP DROPS", 10)
        if not check(scr is not None, "no frame within 10 s:\n%s" % tm.screen()):
            return
        check(tm.alternate() == "1", "not on the alternate screen")
        lines = scr.rstrip("\n").split("\n")
        check(len(lines) <= 24 and max(len(l) for l in lines) <= 80, "frame larger than 80x24")
        ring = [l for l in lines if l.startswith(("RING", "rx->xc"))]
        check(len(ring) == 2 and all(len(l) == 80 and l.endswith(">") for l in ring),
              "80 columns: the rings table is not cut with a marker: %s" % ring)
        check("columns wider" in lines[-1] and "more lines" not in lines[-1],
              "80x24 status bar: %r" % lines[-1])
        for _ in range(4):
            tm.keys("Right")
            scr = tm.wait_for(lambda s: re.search(r"^<.*full/s", s, re.M), 1)
            if scr is not None:
                break
        check(scr is not None, "Right did not scroll to the cut columns:\n%s" % tm.screen())
        tm.keys("Home")
        tm.resize(80, 10)
        scr = tm.wait_for(lambda s: re.search(r"v \d+ more lines", s), 10)
        check(scr is not None and "TOP DROPS" not in scr,
              "80x10: no count of the lines below:\n%s" % tm.screen())
        # The frame is several pages at 80x10: Page Down until its last section.
        for _ in range(4):
            tm.keys("NPage")
            scr = tm.wait_for(lambda s: "TOP DROPS" in s and re.search(r"\^ \d+ above", s), 3)
            if scr is not None:
                break
        check(scr is not None, "Page Down did not show the rest:\n%s" % tm.screen())
        tm.keys("Home")
        tm.resize(200, 50)
        scr = tm.wait_for(lambda s: "TOP DROPS" in s and "LCORE" in s and "RING" in s, 10)
        if check(scr is not None, "200x50: not the whole frame:\n%s" % tm.screen()):
            lines = scr.rstrip("\n").split("\n")
            check(not any(l.rstrip().endswith(">") or l.startswith("<") for l in lines[:-1])
                  and "wider" not in lines[-1] and "more lines" not in lines[-1],
                  "200x50: markers on a frame that fits:\n%s" % scr)
            check(re.search(r"^RING .* direct +full/s", scr, re.M) is not None,
                  "no direct column: %s" % scr)

        tm.keys("h")
        scr = tm.wait_for("handed straight to the consumer", 10)
        check(scr is not None and "p space" in scr and "sort" in scr,
              "h: no help with the keys and 'direct':\n%s" % tm.screen())
        tm.keys("x")
        check(tm.wait_for("STAGE", 10) is not None, "a key did not close the help")

        tm.keys("s", "s")
        # a capture may catch a redraw half done: wait for a whole frame in falling order
        scr = tm.wait_for(lambda s: "sort: cost" in s and len(stage_rows(s)) == 3 and
                          costs(s) == sorted(costs(s), reverse=True), 10)
        check(scr is not None, "s s: not sorted by cost (cycles/packet falling):\n%s" %
              tm.screen())
        tm.keys("s", "s")
        check(tm.wait_for("sort: order", 10) is not None, "sort did not cycle back to order")

        tm.keys("p")
        a = tm.wait_for("PAUSED", 10)
        time.sleep(1.2)
        b = tm.screen()
        check(a is not None and a.split("\n")[:18] == b.split("\n")[:18],
              "p: the frame moved while paused:\n%s\n%s" % (a, b))
        tm.keys("p")
        first = b.split("\n")[0]
        scr = tm.wait_for(lambda s: "PAUSED" not in s.split("\n")[0] and
                          s.split("\n")[0] != first.replace("  PAUSED", ""), 10)
        check(scr is not None, "p again: the frame did not move:\n%s" % tm.screen())

        before = ctl_json(prefix, "stages").get("rx", {}).get("packets", 0)
        tm.keys("c")
        scr = tm.wait_for("cleared", 10)
        after = ctl_json(prefix, "stages").get("rx", {}).get("packets", 0)
        check(scr is not None and before > 0 and after < before,
              "c: counters not cleared (rx packets %d -> %d):\n%s" % (before, after,
                                                                      tm.screen()))
        tm.keys("q")
        check(tm.wait_for("CMD-EXIT=0", 10) is not None, "q did not quit:\n%s" % tm.screen())
        check(tm.alternate() == "0", "the alternate screen left on after q")
    finally:
        tm.close()


def pipefwd_stops(proc, log, prefix):
    tm = Tmux(TAG + "_gone", "gone", "%s --file-prefix %s top --interval 0.2" % (CTL, prefix),
              100, 40)
    try:
        check(tm.wait_for("STAGE", 10) is not None, "no frame:\n%s" % tm.screen())
        rc = stop_pipefwd(proc, log, dpdk_rundir(prefix))
        check(rc == 0, "pipefwd exit %d" % rc)
        scr = tm.wait_for("CMD-EXIT=", 10)
        check(scr is not None and "CMD-EXIT=1" in scr and
              "pipefwd-ctl: top ends: pipefwd went away" in scr and "Traceback" not in scr,
              "top when pipefwd stopped:\n%s" % tm.screen())
        check(tm.alternate() == "0", "the alternate screen left on after pipefwd stopped")
    finally:
        tm.close()


def main():
    if shutil.which("tmux") is None:
        print("tmux is missing (scripts/deps.sh installs it)")
        sys.exit(1)
    tmp = tempfile.mkdtemp(prefix="pf_top_")
    pcap = os.path.join(tmp, "in.pcap")
    write_pcap(pcap, frames(256))
    topo = os.path.join(tmp, "top.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(pcap=pcap, infinite=",infinite_rx=1"))
    prefix = TAG
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-q", topo, "--", "--file-prefix=" + prefix],
                            stdout=log, stderr=subprocess.STDOUT)
    sock = os.path.join(dpdk_rundir(prefix), "dpdk_telemetry.v2")
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not (os.path.exists(sock) and
                                              ctl_json(prefix, "totals").get("rx", 0) > 0):
            time.sleep(0.2)
        if check(proc.poll() is None, "pipefwd did not start"):
            keys_and_sizes(prefix)
            pipefwd_stops(proc, log, prefix)
    finally:
        if proc.poll() is None:
            stop_pipefwd(proc, log, dpdk_rundir(prefix))
    if not FAILS:
        print("ok")
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
