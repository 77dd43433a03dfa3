#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`make bench` leaves tracked files alone unless asked (issue 33 item 6):
scripts/bench.py on one short case (pass, one round, no peers) writes its
results and its report under its build directory (BUILD/bench/report/
benchmarks.md), and neither docs/benchmarks.md nor docs/img/ nor anything
else git tracks changes; the report carries the tracked page's hand-written
sections. BUILD is a temp dir of the test's own with app/pipefwd linked to
the real binary, so the harness writes nowhere else.

usage: test_bench_report.py PIPEFWD
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PIPEFWD = os.path.abspath(sys.argv[1])


def tracked_state():
    """(git status, a hash of docs/benchmarks.md and docs/img/*) of the source tree."""
    # docs/ only: tests running beside this one (the perf suite runs beside the
    # others) may leave ignored or transient files elsewhere; bench writes docs/.
    st = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "docs"],
                        capture_output=True, text=True).stdout
    h = hashlib.sha256()
    for d, _, files in sorted(os.walk(os.path.join(ROOT, "docs", "img"))):
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(p.encode() + open(p, "rb").read() + str(os.stat(p).st_mtime_ns).encode())
    doc = os.path.join(ROOT, "docs", "benchmarks.md")
    h.update(open(doc, "rb").read() + str(os.stat(doc).st_mtime_ns).encode())
    return st, h.hexdigest()


def main():
    fails = []
    tmp = tempfile.mkdtemp(prefix="pf_bench_")
    os.makedirs(os.path.join(tmp, "app"))
    os.symlink(PIPEFWD, os.path.join(tmp, "app", "pipefwd"))
    before = tracked_state()
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "bench.py"), tmp,
                        "--quick", "--only", "pass", "--rounds", "1", "--no-peers",
                        "--file-prefix", "benchrep%d" % os.getpid()],
                       capture_output=True, text=True, timeout=300)
    print(r.stdout[-1500:], r.stderr[-1500:])
    if r.returncode != 0:
        fails.append("bench.py exit %d" % r.returncode)
    if tracked_state() != before:
        fails.append("make bench changed tracked files: %s" % tracked_state()[0])
    report = os.path.join(tmp, "bench", "report", "benchmarks.md")
    if not os.path.exists(report):
        fails.append("no report at %s" % report)
    else:
        text = open(report).read()
        if "| pass |" not in text or "## Commands" not in text:
            fails.append("report without the case or the commands:\n%s" % text[:2000])
        if "docs/ unchanged" not in r.stdout + r.stderr:
            fails.append("bench does not say where the report went")
    for f in fails:
        print("FAIL:", f)
    if fails:
        print("kept", tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
