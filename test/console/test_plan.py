#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd-ctl plan: the layout planner on a running pipeline (issue 31).

    test_plan.py PIPEFWD_TEST PIPEFWD_CTL

rx -> d1 -> d2 -> tx fused on lcore 1 (lcore 2 spare), looping traffic; d1
and d2 are the test-only delay stage, each busy-waiting 20 us a burst, so
they cost far more than rx and tx. The plan for 2 cores must:
- measure every stage on every packet (packets/input 1) and d1, d2 dearer
  than rx and tx together;
- propose the split that puts one delay stage on each lcore,
  [rx d1] | [d2 tx], as the best layout, as an lcores: diff of the file;
- predict each layout by the model docs/scaling.md states, recomputed here
  from the stage costs the plan reports (busiest lcore: its stages, the
  port rx on the source's lcore, the hand-off per crossing edge, its
  producer's share on the producer's side), and the fused one as the layout
  running now;
- after a reload to [rx] | [d1 d2 tx], where lcore 2 cannot keep up and the
  ring drops most packets, still count every packet as seen by every stage
  (the plan is of the layout's capacity, not of its overflow);
- refuse bad parameters with a usage error, not a traceback;
- on two `rss: external` queues with every stage as two instances, offer the
  RSS layouts (affine first: nothing crosses) and say a split in words;
- with two independent pipelines on lcores of their own (no candidate is
  that layout: every cut crosses), find no candidate that gains the 10 % a
  move needs (min_gain_x1000, the rebalance advisor's margin) and propose
  no change.
No timing is asserted: the costs are whatever this machine measured.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replaylib  # noqa: E402

PIPEFWD, CTL = sys.argv[1], sys.argv[2]

TOPOLOGY = """eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,infinite_rx=1" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: d1 }}
  d1: {{ type: delay, us: 20, next: d2 }}
  d2: {{ type: delay, us: 20, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, d1, d2, tx]
  2: []
"""


# Two rx queues the device fills itself (`rss: external`: one rx_pcap each),
# every stage as two flow-hashed instances: the plan may offer RSS layouts.
INSTANCES = """eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,rx_pcap={d}/in.pcap,infinite_rx=1",
        rss: external }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], instances: 2, next: d1 }}
  d1: {{ type: delay, us: 20, instances: 2, next: tx }}
  tx: {{ type: tx, ports: [p1], instances: 2 }}
lcores:
  1: [rx.0, d1.0, tx.0]
  2: [rx.1, d1.1, tx.1]
"""


# Two pipelines, each on its own lcore: every contiguous cut of the pipeline
# order (ra rb da db ta tb) crosses lcores, fused puts both on one.
TWO = """eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,infinite_rx=1" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/in.pcap,infinite_rx=1" }}
  p2: {{ device: "net_null0" }}
  p3: {{ device: "net_null1" }}
stages:
  ra: {{ type: rx, ports: [p0], next: da }}
  rb: {{ type: rx, ports: [p1], next: db }}
  da: {{ type: delay, us: 20, next: ta }}
  db: {{ type: delay, us: 20, next: tb }}
  ta: {{ type: tx, ports: [p2] }}
  tb: {{ type: tx, ports: [p3] }}
lcores:
  1: [ra, da, ta]
  2: [rb, db, tb]
"""


def two_pipelines(d, errors):
    """The running layout beats every candidate: no diff is proposed."""
    topo = d + "/two.yaml"
    with open(topo, "w") as f:
        f.write(TWO.format(d=d))
    prefix = "plan_two_%d" % os.getpid()
    proc = subprocess.Popen([PIPEFWD, "-q", topo, "--", "--file-prefix=" + prefix],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        plan = None
        for _ in range(60):
            time.sleep(0.5)
            rc, out = ctl(prefix, "--json", "plan", "--cores", "2", "--window", "2")
            if rc == 0:
                plan = json.loads(out)
                if plan.get("measured_kpps", 0) > 0 and plan.get("current_kpps"):
                    break
        if not plan or not plan.get("current_kpps"):
            errors.append("two pipelines: no plan with the running layout: %s" % plan)
            return
        # Every candidate crosses lcores where the running layout does not,
        # so none may gain the margin a move needs. (Not "none beats it": with
        # da and db measured apart, moving the light rx and tx stages around
        # can come out 0.1 % ahead -- CI, stop 35: 2609 against 2606 kpps.)
        best = max(l["kpps"] for l in plan["layouts"].values())
        gain = plan.get("min_gain_x1000")
        if gain != 100:
            errors.append("two pipelines: min_gain_x1000 %s, not the advisor's 100" % gain)
        elif best > plan["current_kpps"] * 1.1:
            errors.append("two pipelines: a candidate (%d kpps) should not gain 10%% on the "
                          "running layout (%d kpps): %s" % (best, plan["current_kpps"],
                                                             plan["layouts"]))
        rc, out = ctl(prefix, "plan", "--cores", "2", "--window", "2")
        if rc != 0 or "no change: the layout running now" not in out or "+++" in out:
            errors.append("two pipelines: plan should propose no change: rc %d: %s" % (rc, out))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def instances(d, errors):
    """rss: external counts as RSS (rss-affine offered and best: nothing
    crosses), and a split proposed for a topology with instances is said in
    words, not as an lcores: diff that would leave instances unmapped."""
    topo = d + "/instances.yaml"
    with open(topo, "w") as f:
        f.write(INSTANCES.format(d=d))
    prefix = "plan_i_%d" % os.getpid()
    proc = subprocess.Popen([PIPEFWD, "-q", "-d", "30", topo, "--", "--file-prefix=" + prefix],
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3.0)
        rc, out = ctl(prefix, "--json", "plan", "--cores", "2", "--window", "2")
        if rc != 0:
            errors.append("instances: plan rc %d: %s" % (rc, out))
            return
        plan = json.loads(out)
        kinds = [plan["layouts"][k]["kind"] for k in sorted(plan["layouts"], key=int)]
        if plan.get("rss") != 1 or kinds[0] != "rss-affine" or "current_kpps" in plan:
            errors.append("instances: want rss 1, rss-affine first, no current: %s" % plan)
        rc, out = ctl(prefix, "plan", "--cores", "2", "--rss", "0", "--window", "2")
        print(out)
        if rc != 0 or "change: run each stage once" not in out or "+++" in out:
            errors.append("instances, --rss 0: the split in words, no diff: rc %d: %s" % (rc, out))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def ctl(prefix, *args):
    p = subprocess.run(["/usr/bin/python3", CTL, "--file-prefix", prefix] + list(args),
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout + p.stderr


def busiest(plan, groups):
    """The model, independently: cycles per input packet of the busiest lcore."""
    st = plan["stages"]
    h = plan["handoff_cycles_x10"] / 10.0
    hp = plan["handoff_prod_cycles_x10"] / 10.0
    rec = plan["recycle_cycles_x10"] / 10.0
    io = plan["io_cycles_x10"] / 10.0
    lc = [g.split() for g in groups.split(" | ")]
    where = {n: i for i, g in enumerate(lc) for n in g}
    load = [0.0] * len(lc)
    for n, s in st.items():
        f = s["frac_x1000"] / 1000.0
        load[where[n]] += (s["cycles_x10"] / 10.0 + (io if s["source"] else 0)) * f
    for a, b in (("rx", "d1"), ("d1", "d2"), ("d2", "tx")):
        if where[a] != where[b]:
            f = st[b]["frac_x1000"] / 1000.0          # every packet goes on
            # A source's lcore also takes back the mbufs of what leaves it.
            load[where[a]] += (hp + (rec if where[a] == where["rx"] else 0)) * f
            load[where[b]] += (h - hp) * f
    return max(load)


def check(plan, errors):
    st = plan["stages"]
    if sorted(st) != ["d1", "d2", "rx", "tx"]:
        errors.append("stages %s" % sorted(st))
        return
    for n, s in st.items():
        if not 990 <= s["frac_x1000"] <= 1010:
            errors.append("%s sees %s packets a packet read, want 1" % (n, s["frac_x1000"]))
    cyc = {n: s["cycles_x10"] / 10.0 for n, s in st.items()}
    if not min(cyc["d1"], cyc["d2"]) > cyc["rx"] + cyc["tx"]:
        errors.append("the delay stages should be the dear ones: %s" % cyc)
    lays = [plan["layouts"][k] for k in sorted(plan["layouts"], key=int)]
    if lays[0]["kind"] != "split" or lays[0]["groups"] != "rx d1 | d2 tx":
        errors.append("best layout %s, want the split rx d1 | d2 tx" % lays[0])
    if [l["kpps"] for l in lays] != sorted((l["kpps"] for l in lays), reverse=True):
        errors.append("layouts not best first: %s" % lays)
    for l in lays:
        if l["kind"] not in ("split", "fused"):
            continue
        want = busiest(plan, l["groups"])
        got = l["busiest_cycles_x10"] / 10.0
        if abs(got - want) > 0.01 * want + 0.2:
            errors.append("%s %s: busiest %.1f cycles, the model says %.1f" % (
                l["kind"], l["groups"], got, want))
        kpps = plan["tsc_hz"] / got / 1e3
        if abs(l["kpps"] - kpps) > 0.01 * kpps + 1:
            errors.append("%s: %s kpps, hz / busiest is %.0f" % (l["groups"], l["kpps"], kpps))
    fused = next((l for l in lays if l["kind"] == "fused"), None)
    if fused is None or abs(plan.get("current_kpps", 0) - fused["kpps"]) > 1:
        errors.append("the running layout (fused) should be predicted as fused: %s" % plan)
    if len([l for l in lays if l["kind"] == "split"]) != 3:
        errors.append("--all: want the 3 two-lcore splits of 4 stages: %s" % lays)


def main():
    d = tempfile.mkdtemp(prefix="pf-plan-")
    prefix = "plan_%d" % os.getpid()
    replaylib.write_pcap(d + "/in.pcap", [replaylib.udp4(sport=1000 + i) for i in range(64)])
    topo = d + "/topology.yaml"
    with open(topo, "w") as f:
        f.write(TOPOLOGY.format(d=d))
    proc = subprocess.Popen([PIPEFWD, "-q", "-d", "60", "-j", d + "/stats.json", topo, "--",
                             "--file-prefix=" + prefix], stderr=subprocess.PIPE, text=True)
    errors = []
    try:
        plan = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(1.0)
            rc, out = ctl(prefix, "--json", "plan", "--cores", "2", "--all", "--window", "2")
            if rc == 0:
                plan = json.loads(out)
                break
        if plan is None:
            errors.append("no plan within 30 s: rc %d: %s" % (rc, out))
        else:
            print(json.dumps(plan))
            check(plan, errors)
        rc, out = ctl(prefix, "plan", "--cores", "2")
        print(out)
        if rc != 0 or "+  1: [rx, d1]" not in out or "+  2: [d2, tx]" not in out or \
                "-  1: [rx, d1, d2, tx]" not in out:
            errors.append("plan text: want the lcores diff to [rx, d1] / [d2, tx]: rc %d: %s"
                          % (rc, out))
        # Pipelined, d1 and d2 on lcore 2 cannot keep up with rx on lcore 1: the
        # ring drops most packets (ring_full), yet the plan is of the layout's
        # capacity: every stage still sees every packet read.
        with open(topo + ".new", "w") as f:
            f.write(TOPOLOGY.format(d=d).replace("1: [rx, d1, d2, tx]\n  2: []",
                                                 "1: [rx]\n  2: [d1, d2, tx]"))
        os.replace(topo + ".new", topo)
        rc, out = ctl(prefix, "reload")
        if rc != 0:
            errors.append("reload to the split: %s" % out)
        time.sleep(4.0)            # a 2 s window of the new map, a 1 s sample, margin
        rc, out = ctl(prefix, "--json", "plan", "--cores", "2", "--window", "2")
        rc2, st = ctl(prefix, "--json", "stages")
        if rc != 0 or rc2 != 0:
            errors.append("plan after the split: rc %d: %s %s" % (rc, out, st))
        else:
            plan, st = json.loads(out), json.loads(st)
            print(json.dumps(plan))
            full = st["rx"].get("drops", {}).get("ring_full", 0) or st["rx"].get("ring_full", 0)
            fr = {n: s["frac_x1000"] for n, s in plan["stages"].items()}
            if not full:
                errors.append("the split should overflow rx -> d1: %s" % st["rx"])
            if not all(950 <= v <= 1050 for v in fr.values()):
                errors.append("overflow drops count as carried: every stage sees every "
                              "packet, got %s" % fr)
            if not plan.get("overflow_x1000", 0) >= 10:
                errors.append("overflow_x1000 should show the drops: %s" % plan)
            rc, out = ctl(prefix, "plan", "--cores", "2", "--window", "2")
            if rc != 0 or "warning: full rings dropped" not in out:
                errors.append("plan text should warn of the overflow: rc %d: %s" % (rc, out))
        for bad in (["--cores", "0"], ["--handoff", "nan"], ["--recycle", "-1"], ["--fan", "inf"]):
            rc, out = ctl(prefix, "plan", *bad)
            if rc == 0 or "Traceback" in out:
                errors.append("plan %s not refused cleanly: rc %d: %s" % (" ".join(bad), rc, out))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    instances(d, errors)
    two_pipelines(d, errors)
    for e in errors:
        print("FAIL:", e)
    if not errors:
        shutil.rmtree(d, ignore_errors=True)
        print("plan: costs measured, the balanced split proposed, the model's figures hold")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
