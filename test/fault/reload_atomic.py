#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: a reload a later stage refuses changes nothing (issue 16, defects 4 and 5).

    /usr/bin/python3 test/fault/reload_atomic.py [--pipefwd build/app/pipefwd]

rx -> acl -> dl (delay) -> xc -> tx; 20000 frames at 10 kpps, all permitted
by the ACL. Mid-stream one reload changes three things: the ACL rules
(now deny everything), the delay stage's `us`, and the lcore map (dl moves
to lcore 2). The delay stage's update is refused (PIPEFWD_FAULT_UPDATE_REFUSE=dl,
a test hook run after the stage prepared, so that its prepared state is
aborted too). Checks: "running configuration unchanged" logged; the ACL
kept its rules (every frame forwarded, no acl_deny, acl gauge reloads 0);
/pipefwd/config the same before and after (generation 0, dl still on
lcore 1); reload.failures 1; nothing unaccounted, exit 0. Then the same
file is reloaded again without the hook and must apply all three changes.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from faultlib import (Pipefwd, Scratch, args_parser, check_common, check_flow_order,  # noqa: E402
                      expect_eq, finish, flows_input, load_stats, read_pcap, signal, write_pcap)
from pftest import telemetry  # noqa: E402

N = 20000
EAL = '[--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]'
TOPO = """# atomic reload fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/p0.pcap" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/out.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0], pace_pps: 10000, next: acl }}
  acl: {{ type: acl, default: {default}, rules: [{rule}], next: dl }}
  dl: {{ type: delay, us: {us}, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 4096, burst: 32 }}
lcores:
  1: [rx, acl, {dl1}]
  2: [xc, tx{dl2}]
"""


def config(pf):
    c = telemetry(f"/var/run/dpdk/{pf.prefix}/dpdk_telemetry.v2", "/pipefwd/config")
    return {k: c.get(k) for k in ("generation", "lcore_map", "stages")}


def main():
    ap = args_parser(__doc__)
    args = ap.parse_args()
    sc = Scratch("reload-atomic")
    errors = []
    flows_input(sc.path("in.pcap"), N)
    write_pcap(sc.path("empty.pcap"), [])
    topo = sc.path("topology.yaml")
    good = TOPO.format(eal=EAL, d=sc.dir, default="deny", rule="permit proto udp", us=0,
                       dl1="dl", dl2="")
    bad = TOPO.format(eal=EAL, d=sc.dir, default="deny", rule="deny proto udp", us=1,
                      dl1="", dl2=", dl").replace("1: [rx, acl, ]", "1: [rx, acl]")
    with open(topo, "w") as f:
        f.write(good)
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, args=["-i", "500"], prefix="reload_atomic",
                 env={"PIPEFWD_FAULT_UPDATE_REFUSE": "dl"})
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start: " + pf.stderr()[-1500:])
    else:
        time.sleep(0.3)
        before = config(pf)
        with open(topo + ".tmp", "w") as f:
            f.write(bad)
        os.replace(topo + ".tmp", topo)
        start = len(pf.log)
        pf.signal(signal.SIGHUP)
        if pf.wait_log("running configuration unchanged", timeout=20, start=start) is None:
            errors.append("no 'running configuration unchanged' logged: " +
                          "".join(pf.log[start:])[-1500:])
        line = pf.wait_log("stages.dl: update refused", timeout=1, start=start)
        if line is None:
            errors.append("the refusal does not name stages.dl")
        after = config(pf)
        if after != before:
            errors.append(f"/pipefwd/config changed by a refused reload: {before} -> {after}")
        if pf.wait_log("reloaded", timeout=0.2, start=start) is not None:
            errors.append("the ACL logged a reload of its rules")
    rc = pf.wait(timeout=90)
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    st = load_stats(stats, errors)
    if st is None:
        finish("reload atomic", sc, errors, "no stats")
    expect_eq(errors, "reload.failures", st["reload"]["failures"], 1)
    expect_eq(errors, "reload.generation", st["reload"]["generation"], 0)
    acl = st["stages"]["acl"]
    expect_eq(errors, "acl gauge reloads", acl["gauges"].get("reloads"), 0)
    expect_eq(errors, "acl acl_deny", acl["drops"].get("acl_deny", 0), 0)
    dl = st["stages"]["dl"]
    expect_eq(errors, "dl lcore", dl["lcore"], 1)
    out = read_pcap(sc.path("out.pcap"))
    expect_eq(errors, "frames forwarded (the old ACL kept running)", len(out), N)
    expect_eq(errors, "totals.dropped", st["totals"]["dropped"], 0)
    check_flow_order(out, errors)
    check_common(st, errors)

    # Without the hook, the same change applies as a whole.
    with open(topo, "w") as f:
        f.write(good)
    st2 = sc.path("stats2.json")
    pf = Pipefwd(args.pipefwd, topo, st2, args=["-i", "500"], prefix="reload_atomic2")
    if pf.wait_log("running", timeout=30) is None:
        errors.append("second pipefwd did not start")
    else:
        time.sleep(0.3)
        with open(topo + ".tmp", "w") as f:
            f.write(bad)
        os.replace(topo + ".tmp", topo)
        start = len(pf.log)
        pf.signal(signal.SIGHUP)
        if pf.wait_log("applied", timeout=20, start=start) is None:
            errors.append("the reload without the hook was not applied: " +
                          "".join(pf.log[start:])[-1500:])
        else:
            after = config(pf)
            if after["generation"] != 1 or "dl" not in after["lcore_map"].get("2", ""):
                errors.append(f"/pipefwd/config after the applied reload: {after}")
    rc = pf.wait(timeout=90)
    if rc != 0:
        errors.append(f"second pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    st = load_stats(st2, errors)
    if st is not None:
        acl = st["stages"]["acl"]
        expect_eq(errors, "applied: acl gauge reloads", acl["gauges"].get("reloads"), 1)
        if acl["drops"].get("acl_deny", 0) == 0:
            errors.append("applied: the new ACL denied nothing")
        check_common(st, errors)
    finish("reload atomic", sc, errors, "refused reload changed nothing; applied one changed all")


if __name__ == "__main__":
    main()
