#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd-ctl replay, the users' regression runner, on a copy of a project
replay case whose expected output comes from the scapy model:

  - the case as committed replays clean (exit 0, every port ok);
  - --record into a copy without expected/ and counters.json writes exactly
    the model's frames per port, and that recording replays clean;
  - a tampered expected pcap (a frame dropped, a frame changed, two frames of
    one flow swapped) and a wrong counter give a diff naming each, exit 1;
  - --junit writes XML that parses, with a failure per differing test.

usage: test_replay_tool.py PIPEFWD_CTL PIPEFWD
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
import replaycmp  # noqa: E402
from pftest import finish, write_pcap  # noqa: E402

CTL, PIPEFWD = sys.argv[1], sys.argv[2]
# lpm_forward has drops to record; passthrough has flows of several frames to reorder
CASE = os.path.join(ROOT, "test", "replay", "lpm_forward")
FLOWS = os.path.join(ROOT, "test", "replay", "passthrough")
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def replay(*args):
    return subprocess.run([CTL, "replay", "--pipefwd", PIPEFWD] + list(args),
                          capture_output=True, text=True, timeout=180)


def copy_case(case, dst, with_expected=True):
    """@case without its model (case.py), and without expected output if asked."""
    skip = ["case.py", "__pycache__"] + ([] if with_expected else ["expected",
                                                                    "counters.json"])
    shutil.copytree(case, dst, ignore=shutil.ignore_patterns(*skip))
    return dst


def main():
    tmp = tempfile.mkdtemp(prefix="pf_replay_tool_")
    _, outs = replaycmp.topology_ports(CASE)
    _, flow_outs = replaycmp.topology_ports(FLOWS)

    # 1. the committed case replays clean
    clean = copy_case(FLOWS, os.path.join(tmp, "clean"))
    r = replay(clean)
    check(r.returncode == 0 and ("PASS " + clean) in r.stdout and "counters: ok" in r.stdout,
          "clean replay: rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    for p in flow_outs:
        check(("%s: ok" % p) in r.stdout, "clean replay: port %s not ok:\n%s" % (p, r.stdout))

    # 2. --record writes what the model expects; the recording replays clean
    rec = copy_case(CASE, os.path.join(tmp, "recorded"), with_expected=False)
    r = replay("--record", rec)
    check(r.returncode == 0 and "recorded counters.json" in r.stdout,
          "record: rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    for p in outs:
        got = replaycmp.read_pcap(os.path.join(rec, "expected", p + ".pcap"))
        want = replaycmp.read_pcap(os.path.join(CASE, "expected", p + ".pcap"))
        check(collections.Counter(got) == collections.Counter(want),
              "recorded %s differs from the model: %d vs %d frames" % (p, len(got), len(want)))
    ctrs = json.load(open(os.path.join(rec, "counters.json")))
    model = json.load(open(os.path.join(CASE, "counters.json")))
    for k, v in model.items():
        if k in ctrs:
            check(ctrs[k] == v, "recorded %s = %s, model %s" % (k, ctrs[k], v))
    check(ctrs.get("lpm.ip4_no_route") == model["lpm.ip4_no_route"],
          "record: drop counters missing: %r" % ctrs)
    r = replay(rec)
    check(r.returncode == 0 and "PASS" in r.stdout, "recorded replay: rc %d\n%s" % (
        r.returncode, r.stdout))

    # 3. tampered expectations: each difference named, exit 1
    bad = copy_case(FLOWS, os.path.join(tmp, "tampered"))
    exp = os.path.join(bad, "expected", "p1.pcap")
    frames = replaycmp.read_pcap(exp)
    flows = collections.defaultdict(list)
    for i, d in enumerate(frames):
        flows[replaycmp.flow_key(d)].append(i)
    pair = next((ix for ix in flows.values() if len(ix) >= 2 and ix[1] < len(frames) - 2 and
                 frames[ix[0]] != frames[ix[1]]), None)
    check(pair is not None, "lpm_forward p1 has no flow with two frames to swap")
    dropped = frames[-1]
    changed = bytearray(frames[-2])
    changed[-1] ^= 0xFF
    tampered = frames[:-2] + [bytes(changed)]
    if pair:
        tampered[pair[0]], tampered[pair[1]] = tampered[pair[1]], tampered[pair[0]]
    write_pcap(exp, tampered)
    ctr = json.load(open(os.path.join(bad, "counters.json")))
    ctr["totals.tx"] += 1
    with open(os.path.join(bad, "counters.json"), "w") as f:
        json.dump(ctr, f)
    junit = os.path.join(tmp, "replay.xml")
    r = replay("--junit", junit, clean, bad)
    out = r.stdout
    check(r.returncode == 1, "tampered: rc %d (want 1)\n%s" % (r.returncode, out))
    # expected lost its last frame (pipefwd's is extra) and has a changed one
    # instead of the one before (missing; pipefwd's is extra)
    check("p1: 1 missing (-), 2 extra (+), 1 flow reordered (~)" in out,
          "tampered: p1 summary:\n" + out)
    check(("- " + replaycmp.describe(bytes(changed))) in out and
          ("+ " + replaycmp.describe(dropped)) in out and
          ("+ " + replaycmp.describe(frames[-2])) in out, "tampered: frames not listed:\n" + out)
    check("~ flow of" in out, "tampered: reorder not listed:\n" + out)
    check(re.search(r"^\s+totals\.tx\s+%d\s+%d$" % (ctr["totals.tx"], ctr["totals.tx"] - 1),
                    out, re.M) is not None, "tampered: counter not listed:\n" + out)
    check(("FAIL " + bad + ": 2 differences") in out and ("PASS " + clean) in out,
          "tampered: verdict lines:\n" + out)
    check("Traceback" not in r.stderr, "tampered: traceback\n" + r.stderr)

    # 4. JUnit parses: two suites, failures only in the tampered one
    try:
        root = ET.parse(junit).getroot()
    except (ET.ParseError, OSError) as e:
        check(False, "junit: %s" % e)
        finish(errors, tmp)
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    check(set(suites) == {"pipefwd-replay.clean", "pipefwd-replay.tampered"},
          "junit suites %r" % list(suites))
    if len(suites) == 2:
        failed = {tc.get("name") for tc in suites["pipefwd-replay.tampered"]
                  if tc.find("failure") is not None}
        check(failed == {"port p1", "counters"}, "junit failures %r" % failed)
        check(suites["pipefwd-replay.clean"].get("failures") == "0", "junit clean failures")
        check(root.get("failures") == "2", "junit total failures %r" % root.get("failures"))

    # 5. a directory that is not a replay dir: exit 1 with a message
    r = replay(os.path.join(tmp, "nothing"))
    check(r.returncode == 1 and "no topology.yaml" in r.stdout and "Traceback" not in r.stderr,
          "missing dir: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    print("replay tool: %d checks failed" % len(errors))
    finish(errors, tmp)


if __name__ == "__main__":
    main()
