#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate a replay case's pcaps and counters from its description.

    /usr/bin/python3 scripts/gen_replay.py test/replay/<case> [--out DIR]

Reads <case>/case.py (inputs(), expected(inputs), COUNTERS) and the port
names that <case>/topology.yaml reads from @IN@/<port>.pcap and writes to
@OUT@/<port>.pcap, then writes in/<port>.pcap, expected/<port>.pcap and
counters.json (into --out instead of the case dir when given).
"""
import argparse
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replaylib  # noqa: E402
from replaycmp import topology_ports  # noqa: E402,F401


def load_case(case_dir):
    spec = importlib.util.spec_from_file_location("case", os.path.join(case_dir, "case.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generate(case_dir, out_dir):
    case = load_case(case_dir)
    ins, outs = topology_ports(case_dir)
    inputs = case.inputs()
    expected = case.expected(inputs)
    for port in inputs:
        if port not in ins:
            sys.exit(f"{case_dir}: inputs() names port {port} that topology.yaml does not read")
    for port in expected:
        if port not in outs:
            sys.exit(f"{case_dir}: expected() names port {port} that topology.yaml does not write")
    os.makedirs(os.path.join(out_dir, "in"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "expected"), exist_ok=True)
    for port in ins:
        replaylib.write_pcap(os.path.join(out_dir, "in", port + ".pcap"), inputs.get(port, []))
    for port in outs:
        replaylib.write_pcap(os.path.join(out_dir, "expected", port + ".pcap"),
                             expected.get(port, []))
    with open(os.path.join(out_dir, "counters.json"), "w") as f:
        json.dump(case.COUNTERS, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case_dirs", nargs="+")
    ap.add_argument("--out", help="write here instead of the case dir (one case only)")
    args = ap.parse_args()
    for d in args.case_dirs:
        generate(d, args.out or d)
        print(f"generated {d}")


if __name__ == "__main__":
    main()
