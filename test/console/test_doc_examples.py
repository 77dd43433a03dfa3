#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every complete topology shown in the docs passes `pipefwd --check`.

A ```yaml block in README.md or docs/**/*.md that has both a top-level
`stages:` and `lcores:` key is a complete topology; the others are
fragments and are skipped. Each is checked from a temp dir; the files it
names that a reader makes first (rx_pcap inputs, routes_file, rules_file) are
there as empty stubs, so what is checked is the topology itself. A network
namespace an example names (`namespace: rtr`, which --check wants to exist)
is stood in for by one the test makes (as root) and deletes; without root
such examples are skipped.

usage: test_doc_examples.py PIPEFWD
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PIPEFWD = os.path.abspath(sys.argv[1])


def examples():
    docs = [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    for path in docs:
        text = open(path).read()
        for m in re.finditer(r"^```yaml\n(.*?)^```", text, re.S | re.M):
            block = m.group(1)
            keys = set(re.findall(r"^(\w+):", block, re.M))
            if {"stages", "lcores"} <= keys:
                yield os.path.relpath(path, ROOT), text[:m.start()].count("\n") + 2, block


def stub_files(block, tmp):
    """Empty stand-ins for the input files @block names, under @tmp (the cwd
    and the topology's directory)."""
    for path in re.findall(r"rx_pcap=([^,\"\s]+)", block):
        if not os.path.isabs(path):
            os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
            with open(os.path.join(tmp, path), "wb") as f:
                f.write(bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000"))
    for path in re.findall(r"(?:routes_file|rules_file):\s*\"?([^\s,}\"]+)", block):
        if not os.path.isabs(path):
            os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
            open(os.path.join(tmp, path), "w").close()


NS_RE = re.compile(r"(namespace:\s*)([\w.-]+)")


def main():
    failed = checked = 0
    ns = "pfdoc%04x" % (os.getpid() & 0xffff)
    have_ns = os.geteuid() == 0 and subprocess.run(["ip", "netns", "add", ns],
                                                    capture_output=True).returncode == 0
    try:
        with tempfile.TemporaryDirectory(prefix="pf_doc_yaml_") as tmp:
            failed, checked = check_all(tmp, ns if have_ns else None)
    finally:
        if have_ns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    print("doc examples: %d checked, %d failed" % (checked, failed))
    return 1 if failed or checked == 0 else 0


def check_all(tmp, ns):
    failed = checked = 0
    for n, (doc, line, block) in enumerate(examples()):
        if NS_RE.search(block):
            if ns is None:
                print("skip: %s:%d names a namespace (needs root)" % (doc, line))
                continue
            block = NS_RE.sub(lambda m: m.group(1) + ns, block)
        d = os.path.join(tmp, str(n))
        os.makedirs(d)
        stub_files(block, d)
        f = os.path.join(d, "example.yaml")
        with open(f, "w") as out:
            out.write(block)
        r = subprocess.run([PIPEFWD, "--check", f], capture_output=True, text=True,
                           timeout=60, cwd=d)
        checked += 1
        if r.returncode != 0:
            failed += 1
            print("FAIL: %s:%d: the example fails --check:\n%s" % (
                doc, line, r.stderr.replace(f, "example")))
    return failed, checked


if __name__ == "__main__":
    sys.exit(main())
