#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run one packet-replay case and compare with its expected outputs.

    /usr/bin/python3 scripts/replay.py test/replay/<case> [--pipefwd build/app/pipefwd]

1. Regenerates the case from case.py into a scratch dir and checks that the
   committed in/, expected/ and counters.json are what the model produces.
2. Runs pipefwd on topology.yaml (@IN@, @OUT@, @CASE@ substituted) with the
   net_pcap inputs, until idle, with --stats-json; lossless
   (runtime.backpressure: true is added unless the case expects ring_full
   drops or sets it), so a busy machine cannot turn a replay into drops.
3. Compares per output port: the same frames byte for byte, in the same
   order within each flow; the counters listed in counters.json exactly, and
   every drop counter not listed is zero; nothing unaccounted, no mbuf leaked.
"""
import argparse
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import replaylib  # noqa: E402
import replaycmp  # noqa: E402
import gen_replay  # noqa: E402

ROOT = os.path.dirname(HERE)


def router_macs(topology_text):
    """The ports' MACs (a routed frame leaves with one of them as source)."""
    macs = set()
    for m in re.findall(r"mac:\s*\"?([0-9a-fA-F:]{17})", topology_text):
        macs.add(bytes.fromhex(m.replace(":", "")))
    return macs


def check_generated(case_dir, scratch, errors):
    gen_dir = os.path.join(scratch, "gen")
    gen_replay.generate(case_dir, gen_dir)
    for sub in ("in", "expected"):
        for name in sorted(os.listdir(os.path.join(gen_dir, sub))):
            committed = os.path.join(case_dir, sub, name)
            fresh = os.path.join(gen_dir, sub, name)
            if not os.path.exists(committed) or open(committed, "rb").read() != open(fresh, "rb").read():
                errors.append(f"{sub}/{name} differs from what case.py generates "
                              f"(run scripts/gen_replay.py {case_dir})")
    if json.load(open(os.path.join(case_dir, "counters.json"))) != \
            json.load(open(os.path.join(gen_dir, "counters.json"))):
        errors.append("counters.json differs from case.py COUNTERS")


def run_case(case_dir, pipefwd, keep):
    case_dir = os.path.abspath(case_dir)
    name = os.path.basename(case_dir)
    scratch = replaycmp.scratch_dir(name)
    errors = []
    try:
        check_generated(case_dir, scratch, errors)
        out_dir = os.path.join(scratch, "out")
        os.makedirs(out_dir)
        want = json.load(open(os.path.join(case_dir, "counters.json")))
        rc, err, stats, dt = replaycmp.run_pipefwd(case_dir, out_dir, pipefwd,
                                                   f"replay_{name}_{os.getpid()}",
                                                   want_ctrs=want)
        if rc != 0:
            errors.append(f"pipefwd exited {rc}\n{err}")
        if stats is None:
            errors.append("no stats JSON written")
            return errors
        _, outs = replaycmp.topology_ports(case_dir)
        for port in outs:
            got = replaylib.read_pcap(os.path.join(out_dir, port + ".pcap"))
            want = replaylib.read_pcap(os.path.join(case_dir, "expected", port + ".pcap"))
            errors += replaycmp.port_errors(port, got, want)
        # RFC 1812 holds over every output of every case, expected or not.
        macs = router_macs(open(os.path.join(case_dir, "topology.yaml")).read())
        for port in outs:
            got = replaylib.read_pcap(os.path.join(out_dir, port + ".pcap"))
            for p in sorted(set(replaylib.rfc1812_violations(got, macs))):
                errors.append(f"{port}: RFC 1812: {p}")
        want_ctrs = json.load(open(os.path.join(case_dir, "counters.json")))
        for key, value, got in replaycmp.counter_diffs(stats, want_ctrs):
            errors.append(f"counter {key} = {got}, expected {value}" +
                          ("" if key in want_ctrs else " (not listed)"))
        errors += replaycmp.run_errors(stats)
        print(f"{name}: rx {stats['totals']['rx']} tx {stats['totals']['tx']} "
              f"dropped {stats['totals']['dropped']} in {dt:.2f}s")
        return errors
    finally:
        if keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--pipefwd", default=os.path.join(ROOT, "build", "app", "pipefwd"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch dir")
    args = ap.parse_args()
    failed = 0
    for case in args.cases:
        errors = run_case(case, args.pipefwd, args.keep)
        if errors:
            failed += 1
            print(f"FAIL {case}")
            for e in errors:
                print(f"  {e}")
        else:
            print(f"PASS {case}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
