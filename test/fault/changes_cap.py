#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""At the cap of unsaved live changes, a delete that takes a pending add back is taken
(issue 32 item 10).

pipefwd-test holds at most PIPEFWD_FAULT_CHANGES_MAX=4 unsaved changes (256 in pipefwd:
the same code, reached in 4 table rebuilds instead of 256). Four route adds fill the
list; then, each through /pipefwd/change, checked against what the topology and the
changes say the FIB must hold (lookups by /pipefwd/table,lpm,lookup):
 - a fifth add is refused ("too many unsaved changes") and its route is not there;
 - a delete of a configured route (a fifth change) is refused, the route stays;
 - a delete of a pending add is taken: 3 unsaved, its destination has no route;
 - an add fits again: 4 unsaved, routed.
It used to refuse every change at the cap, the delete that shrinks the list too.
pipefwd then exits 0 with the accounting exact.

usage: changes_cap.py --pipefwd PIPEFWD_TEST
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import dpdk_rundir, finish, stop_pipefwd, telemetry  # noqa: E402

CAP = 4
TOPO = """\
eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: { device: "net_null0", mac: "02:00:00:00:00:10", ipv4: 192.168.0.1/24 }
  p1: { device: "net_null1", mac: "02:00:00:00:00:11", ipv4: 172.17.0.1/24 }
stages:
  rx: { type: rx, ports: [p0], next: { ipv4: lpm } }
  lpm:
    type: lpm
    nexthops: { n1: { port: p1, mac: "02:00:00:00:00:aa" } }
    routes: [ { prefix: 10.0.0.0/8, via: n1 } ]
    next: tx
  tx: { type: tx, ports: [p1] }
lcores:
  1: [rx, lpm, tx]
"""
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pf_changes_cap_")
    prefix = "changes_cap_%d" % os.getpid()
    topo = os.path.join(tmp, "topo.yaml")
    report = os.path.join(tmp, "report.json")
    with open(topo, "w") as f:
        f.write(TOPO)
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    proc = subprocess.Popen([args.pipefwd, "-q", "-j", report, topo, "--",
                             "--file-prefix=" + prefix], stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, PIPEFWD_FAULT_CHANGES_MAX=str(CAP)))
    sock = os.path.join(dpdk_rundir(prefix), "dpdk_telemetry.v2")

    def tel(cmd):
        return telemetry(sock, cmd, timeout=30)

    def change(op, entry):
        r = tel("/pipefwd/change,%s,lpm,routes,%s" % (op, entry))
        print("%s %s -> %s" % (op, entry, r.get("error") or "unsaved %s" % r.get("unsaved")))
        return r

    def route(addr):
        """The prefix the FIB routes @addr by, None for no route."""
        r = tel("/pipefwd/table,lpm,lookup,addr=" + addr)
        return r.get("prefix") if r.get("result") == "route" else None

    try:
        end, up = time.monotonic() + 60, False
        while time.monotonic() < end and not up and proc.poll() is None:
            time.sleep(0.2)
            try:
                up = tel("/pipefwd/totals") is not None
            except (OSError, ValueError):
                pass
        if not check(up, "pipefwd did not start: " + open(log.name).read()[-1500:]):
            return
        for i in range(CAP):
            r = change("add", "11.0.%d.0/24 n1" % i)
            check(r.get("unsaved") == i + 1, "add %d: %s" % (i, r))
        r = change("add", "12.0.0.0/24 n1")
        check("too many unsaved changes" in r.get("error", ""), "an add over the cap: %s" % r)
        check(route("12.0.0.1") is None, "the refused add is in the FIB")
        r = change("del", "10.0.0.0/8")
        check("too many unsaved changes" in r.get("error", ""),
              "a delete of a configured route over the cap: %s" % r)
        check(route("10.9.9.9") == "10.0.0.0/8", "the refused delete took 10.0.0.0/8 away")
        r = change("del", "11.0.1.0/24")
        check(r.get("applied") == "del" and r.get("unsaved") == CAP - 1,
              "a delete that takes a pending add back, at the cap: %s" % r)
        check(route("11.0.1.1") is None and route("11.0.2.1") == "11.0.2.0/24",
              "after the delete: 11.0.1.1 by %s, 11.0.2.1 by %s" % (
                  route("11.0.1.1"), route("11.0.2.1")))
        r = change("add", "12.0.0.0/24 n1")
        check(r.get("applied") == "add" and r.get("unsaved") == CAP, "an add again: %s" % r)
        check(route("12.0.0.1") == "12.0.0.0/24", "12.0.0.0/24 not in the FIB after its add")
        lst = tel("/pipefwd/changes")
        check(lst.get("unsaved") == CAP and "11.0.1.0/24" not in lst.get("key", []),
              "the list: %s" % lst)
    finally:
        rc = stop_pipefwd(proc, log, dpdk_rundir(prefix))
    check(rc == 0, "pipefwd exited %d: %s" % (rc, open(log.name).read()[-1500:]))
    try:
        with open(report) as f:
            st = json.load(f)
        check(st["totals"]["unaccounted"] == 0 and st["mbufs_in_use_after_stop"] == 0,
              "exit report: %s, mbufs %s" % (st["totals"], st["mbufs_in_use_after_stop"]))
    except (OSError, ValueError, KeyError) as e:
        check(False, "no exit report: %s" % e)
    if not FAILS:
        print("changes cap: ok")
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
