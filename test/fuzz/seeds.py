#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of each fuzz target into OUT/<target>/ (one file per input).

    /usr/bin/python3 test/fuzz/seeds.py OUT

fuzz_rx: every frame of every replay case pcap (test/replay/*/{in,expected}/*.pcap),
  and test/fuzz/seeds/fuzz_rx/* (frames at the edges of rx's fast path).
fuzz_topology: conf/*.yaml, test/replay/*/topology.yaml, test/unit/fixtures/*.yaml.
fuzz_tables: conf/tables/*, conf/examples/*.rules and the replay cases' table files.
fuzz_l2fib: test/fuzz/seeds/fuzz_l2fib/* (hand-written operation sequences).
"""
import glob
import hashlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from pcaplib import read_pcap  # noqa: E402


def put(out, blob):
    with open(os.path.join(out, hashlib.sha1(blob).hexdigest()), "wb") as f:
        f.write(blob)


def main():
    out = sys.argv[1]
    rx = os.path.join(out, "fuzz_rx")
    topo = os.path.join(out, "fuzz_topology")
    os.makedirs(rx, exist_ok=True)
    os.makedirs(topo, exist_ok=True)
    n_rx = n_topo = 0
    for p in sorted(glob.glob(os.path.join(ROOT, "test/replay/*/*/*.pcap"))):
        for frame in read_pcap(p):
            put(rx, frame)
            n_rx += 1
    for p in sorted(glob.glob(os.path.join(ROOT, "test/fuzz/seeds/fuzz_rx/*"))):
        put(rx, open(p, "rb").read())
        n_rx += 1
    for pat in ("conf/*.yaml", "conf/*/*.yaml", "test/replay/*/topology.yaml",
                "test/unit/fixtures/*.yaml"):
        for p in sorted(glob.glob(os.path.join(ROOT, pat))):
            put(topo, open(p, "rb").read())
            n_topo += 1
    tables = os.path.join(out, "fuzz_tables")
    l2 = os.path.join(out, "fuzz_l2fib")
    os.makedirs(tables, exist_ok=True)
    os.makedirs(l2, exist_ok=True)
    n_tab = 0
    for pat in ("conf/tables/*", "conf/examples/*.rules", "test/replay/*/*.rules",
                "test/replay/*/*.routes", "test/replay/*/*.macs", "test/replay/*/*.txt"):
        for p in sorted(glob.glob(os.path.join(ROOT, pat))):
            put(tables, open(p, "rb").read())
            n_tab += 1
    for p in sorted(glob.glob(os.path.join(ROOT, "test/fuzz/seeds/fuzz_l2fib/*"))):
        put(l2, open(p, "rb").read())
    print(f"seeds: fuzz_rx {n_rx} frames, fuzz_topology {n_topo} files, fuzz_tables {n_tab} "
          f"files -> {out}")


if __name__ == "__main__":
    main()
