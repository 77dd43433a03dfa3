#!/usr/bin/env python3
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
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import replaylib  # noqa: E402
import gen_replay  # noqa: E402

ROOT = os.path.dirname(HERE)


def describe(data):
    try:
        from scapy.all import Ether
        return Ether(data).summary()
    except Exception:  # noqa: BLE001 - only used for messages
        return data.hex()


def compare_port(port, got, want, errors):
    if got == want:
        return
    cg, cw = collections.Counter(got), collections.Counter(want)
    missing = cw - cg
    extra = cg - cw
    for data, n in list(missing.items())[:5]:
        errors.append(f"{port}: missing {n}x {describe(data)}")
    for data, n in list(extra.items())[:5]:
        errors.append(f"{port}: unexpected {n}x {describe(data)}")
    if missing or extra:
        errors.append(f"{port}: got {len(got)} frames, expected {len(want)}")
        return
    # Same multiset, different order: only order within a flow matters.
    fg, fw = collections.defaultdict(list), collections.defaultdict(list)
    for d in got:
        fg[replaylib.flow_key(d)].append(d)
    for d in want:
        fw[replaylib.flow_key(d)].append(d)
    for key, seq in fw.items():
        if fg[key] != seq:
            errors.append(f"{port}: flow {describe(seq[0])} reordered")


def lookup(stats, key):
    """Value of "stage.counter", "ports.p0.tx" or "totals.x" in the stats JSON."""
    head, _, rest = key.partition(".")
    if head in ("totals", "ports", "rings"):
        node = stats[head]
        for part in rest.split(".") if head != "rings" else [rest.rsplit(".", 1)[0],
                                                               rest.rsplit(".", 1)[1]]:
            node = node[part]
        return node
    # Stage names may hold dots (instances: "acl.0"); the longest stage name
    # wins, and a stage with instances ("acl") sums its instances.
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        name, rest = ".".join(parts[:i]), ".".join(parts[i:])
        if name in stats["stages"]:
            return stage_value(stats["stages"][name], name, rest)
        members = [s for s in stats["stages"] if group_of(s) == name and s != name]
        if members:
            return sum(stage_value(stats["stages"][m], m, rest) for m in members)
    raise KeyError(f"no stage {head}")


def group_of(stage):
    """"acl" for an instance "acl.1", else the stage name itself."""
    base, _, k = stage.rpartition(".")
    return base if base and k.isdigit() else stage


def stage_value(st, name, rest):
    for section in ("drops", "counters", "gauges", "edges"):
        if rest in st.get(section, {}):
            return st[section][rest]
    if rest in st:
        return st[rest]
    raise KeyError(f"stage {name} has no counter {rest}")


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


def lossless(topo, want_ctrs):
    """Run the case lossless (runtime.backpressure: a stage takes only what the
    rings after it hold), so a replay is complete however the machine
    schedules the lcores; unless the case sets backpressure itself or expects
    ring_full drops (it then tests the overflow)."""
    if "backpressure" in topo or any(k.endswith("ring_full") for k in want_ctrs):
        return topo
    m = re.search(r"^runtime:[ \t]*\{", topo, re.M)
    if m:
        return topo[:m.end()] + " backpressure: true," + topo[m.end():]
    m = re.search(r"^runtime:[ \t]*\n", topo, re.M)
    if m:
        return topo[:m.end()] + "  backpressure: true\n" + topo[m.end():]
    return topo.rstrip("\n") + "\nruntime: { backpressure: true }\n"


def run_case(case_dir, pipefwd, keep):
    case_dir = os.path.abspath(case_dir)
    name = os.path.basename(case_dir)
    scratch = tempfile.mkdtemp(prefix=f"replay-{name}-")
    errors = []
    try:
        check_generated(case_dir, scratch, errors)
        out_dir = os.path.join(scratch, "out")
        os.makedirs(out_dir)
        topo = open(os.path.join(case_dir, "topology.yaml")).read()
        topo = (topo.replace("@IN@", os.path.join(case_dir, "in"))
                .replace("@OUT@", out_dir).replace("@CASE@", case_dir))
        topo = lossless(topo, json.load(open(os.path.join(case_dir, "counters.json"))))
        topo_path = os.path.join(case_dir, f".run-{os.getpid()}.yaml")
        with open(topo_path, "w") as f:
            f.write(topo)
        stats_path = os.path.join(scratch, "stats.json")
        cmd = [pipefwd, "-q", "-i", "500", "-j", stats_path, topo_path, "--",
               f"--file-prefix=replay_{name}_{os.getpid()}"]
        t0 = time.time()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(topo_path)
        dt = time.time() - t0
        if proc.returncode != 0:
            errors.append(f"pipefwd exited {proc.returncode}\n{proc.stderr}")
        if not os.path.exists(stats_path):
            errors.append("no stats JSON written")
            return errors
        stats = json.load(open(stats_path))
        _, outs = gen_replay.topology_ports(case_dir)
        for port in outs:
            got = replaylib.read_pcap(os.path.join(out_dir, port + ".pcap"))
            want = replaylib.read_pcap(os.path.join(case_dir, "expected", port + ".pcap"))
            compare_port(port, got, want, errors)
        # RFC 1812 holds over every output of every case, expected or not.
        macs = router_macs(topo)
        for port in outs:
            got = replaylib.read_pcap(os.path.join(out_dir, port + ".pcap"))
            for p in sorted(set(replaylib.rfc1812_violations(got, macs))):
                errors.append(f"{port}: RFC 1812: {p}")
        want_ctrs = json.load(open(os.path.join(case_dir, "counters.json")))
        for key, value in sorted(want_ctrs.items()):
            try:
                got = lookup(stats, key)
            except KeyError as e:
                errors.append(f"counter {key}: {e}")
                continue
            if got != value:
                errors.append(f"counter {key} = {got}, expected {value}")
        for sname, st in stats["stages"].items():
            for reason, v in st["drops"].items():
                if v != 0 and f"{sname}.{reason}" not in want_ctrs and \
                        f"{group_of(sname)}.{reason}" not in want_ctrs:
                    errors.append(f"counter {sname}.{reason} = {v}, expected 0 (not listed)")
        if stats["totals"]["unaccounted"] != 0:
            errors.append(f"unaccounted packets: {stats['totals']}")
        if stats.get("mbufs_in_use_after_stop", 0) != 0:
            errors.append(f"mbufs leaked: {stats['mbufs_in_use_after_stop']}")
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
