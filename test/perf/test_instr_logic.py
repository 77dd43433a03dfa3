#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/bench_instr.py without valgrind: the callgrind parser (compressed
names, the object of a call, driver and upkeep costs) on a hand-written file,
and the gate's verdicts on made-up figures against a made-up baseline."""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import bench_instr  # noqa: E402

# One thread: worker_main (app) calls the pcap rx twice (inclusive 300),
# run_stage calls the null tx (inclusive 200: the driver's own 150 plus 50 in
# the mempool library it calls, still the driver's share), a housekeep function
# (inclusive 40) and an app function with no cob= (same object as the
# caller, even though the previous call named another object).
CG = """version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 1000

ob=(1) /work/build/app/pipefwd
fl=(1) ???
fn=(1) worker_main
0 100
cob=(2) /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_net_pcap.so.23.0
cfi=(2) ???
cfn=(2) 0x0000000000003f70
calls=2 0
0 300
cfn=(3) run_stage
calls=1 0
0 600

fn=(3)
0 310
cob=(3) /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_net_null.so.23.0
cfn=(4) 0x0000000000004370
calls=1 0
0 200
cfn=(5) l2_housekeep
calls=3 0
0 40
cfn=(6) tx_flush_port
calls=1 0
0 50

fn=(5)
0 40

fn=(6)
0 50

ob=(2)
fn=(2)
0 300

ob=(3)
fn=(4)
0 150
cob=(4) /usr/lib/x86_64-linux-gnu/librte_mempool_ring.so.23.0
cfn=(7) 0x0000000000001000
calls=1 0
0 50

ob=(4)
fn=(7)
0 50
"""

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "cg.1.1-02")
    with open(p, "w") as f:
        f.write(CG)
    r = bench_instr.parse_callgrind(p)
    check("total Ir", r["ir"], 1000)
    check("pcap rx", r["drivers"].get("librte_net_pcap"), dict(ir=300, calls=2))
    check("null tx", r["drivers"].get("librte_net_null"), dict(ir=200, calls=1))
    check("driver objects", sorted(r["drivers"]), ["librte_net_null", "librte_net_pcap"])
    check("upkeep", r["upkeep"], 40)
    idle = os.path.join(d, "cg.1.1-01")
    with open(idle, "w") as f:
        f.write("version: 1\nevents: Ir\nsummary: 20\n")
    check("forwarding thread", os.path.basename(bench_instr.forwarding_thread([idle, p])["file"]),
          "cg.1.1-02")

    base = os.path.join(d, "base.json")
    with open(base, "w") as f:
        json.dump(dict(cases=dict(pass_=dict(total=400.0), l3=dict(total=600.0))), f)
    a = argparse.Namespace(gate=base)
    rows = lambda **kw: [dict(case=k, pipefwd=v) for k, v in kw.items()]  # noqa: E731
    check("equal", bench_instr.gate(a, rows(pass_=dict(total=400.0))), 0)
    check("+2.9 %", bench_instr.gate(a, rows(pass_=dict(total=411.6))), 0)
    check("+3.1 %", bench_instr.gate(a, rows(pass_=dict(total=412.4))), 1)
    check("cheaper", bench_instr.gate(a, rows(pass_=dict(total=200.0))), 0)
    check("one of two over", bench_instr.gate(a, rows(pass_=dict(total=400.0),
                                                      l3=dict(total=700.0))), 1)
    check("not measured", bench_instr.gate(a, rows(pass_=dict(error="x"))), 1)
    check("not in baseline", bench_instr.gate(a, rows(acl=dict(total=1.0))), 1)

if failures:
    print("\n".join(["FAIL " + f for f in failures]))
    sys.exit(1)
print("bench_instr logic: parser and gate verdicts as expected")
