#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prove the replay runner can fail: mutate a copy of a case's model and
check that each mutation (a missing frame, a wrong counter, a reordered flow,
a stale committed pcap) is reported.

    /usr/bin/python3 scripts/replay_selftest.py test/replay/passthrough
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_replay  # noqa: E402
import replay  # noqa: E402

MUTATIONS = {
    "missing frame": ("_orig_expected = expected\n"
                      "def expected(inp):\n"
                      "    e = _orig_expected(inp)\n"
                      "    e['p1'] = e['p1'][:-1]\n"
                      "    return e\n", "frames, expected"),
    "wrong counter": ("COUNTERS = dict(COUNTERS)\nCOUNTERS['totals.tx'] += 1\n", "totals.tx"),
    "reordered flow": ("_orig_expected = expected\n"
                       "def expected(inp):\n"
                       "    e = _orig_expected(inp)\n"
                       "    tcp = [p for p in e['p1'] if p.haslayer('TCP')]\n"
                       "    rest = [p for p in e['p1'] if not p.haslayer('TCP')]\n"
                       "    e['p1'] = rest + tcp[::-1]\n"
                       "    return e\n", "reordered"),
}


def main():
    case = os.path.abspath(sys.argv[1])
    pipefwd = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(HERE), "build",
                                                                 "app", "pipefwd")
    failures = 0
    for name, (patch, needle) in MUTATIONS.items():
        tmp = tempfile.mkdtemp(prefix="replay-selftest-")
        try:
            copy = os.path.join(tmp, os.path.basename(case))
            shutil.copytree(case, copy)
            with open(os.path.join(copy, "case.py"), "a") as f:
                f.write("\n" + patch)
            gen_replay.generate(copy, copy)
            errors = replay.run_case(copy, pipefwd, False)
            caught = any(needle in e for e in errors)
            print(f"{'ok' if caught else 'NOT CAUGHT'}: {name}: {errors[:2]}")
            failures += not caught
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    # A committed pcap that the model no longer produces is stale.
    tmp = tempfile.mkdtemp(prefix="replay-selftest-")
    try:
        copy = os.path.join(tmp, os.path.basename(case))
        shutil.copytree(case, copy)
        with open(os.path.join(copy, "expected", "p1.pcap"), "ab") as f:
            f.write(b"\x00" * 16)
        errors = replay.run_case(copy, pipefwd, False)
        caught = any("differs from what case.py generates" in e for e in errors)
        print(f"{'ok' if caught else 'NOT CAUGHT'}: stale expected pcap")
        failures += not caught
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # The RFC 1812 output check flags each forbidden routed frame.
    import replaylib
    from scapy.all import Ether, IP, UDP
    router = bytes.fromhex("020000000011")
    bad = {
        "TTL 0": Ether(src="02:00:00:00:00:11", dst="02:00:00:00:00:0b") / IP(dst="10.0.0.1", ttl=0) / UDP(),
        "checksum": Ether(src="02:00:00:00:00:11", dst="02:00:00:00:00:0b") / IP(dst="10.0.0.1", chksum=1) / UDP(),
        "martian": Ether(src="02:00:00:00:00:11", dst="02:00:00:00:00:0b") / IP(dst="127.0.0.1") / UDP(),
        "broadcast": Ether(src="02:00:00:00:00:11", dst="02:00:00:00:00:0b") / IP(dst="255.255.255.255") / UDP(),
    }
    for name, pkt in bad.items():
        found = replaylib.rfc1812_violations([bytes(pkt)], {router})
        print(f"{'ok' if found else 'NOT CAUGHT'}: RFC 1812 {name}: {found}")
        failures += not found
    good = Ether(src="02:00:00:00:00:11", dst="02:00:00:00:00:0b") / IP(dst="10.0.0.1", ttl=63) / UDP()
    bridged = Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b") / IP(dst="255.255.255.255", ttl=0) / UDP()
    if replaylib.rfc1812_violations([bytes(good), bytes(bridged)], {router}):
        print("NOT OK: a good routed frame or a bridged frame was flagged")
        failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
