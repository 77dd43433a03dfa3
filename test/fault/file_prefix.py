#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: a --file-prefix that aims EAL's runtime directory elsewhere (issue 32, defect 1).

    /usr/bin/python3 test/fault/file_prefix.py [--pipefwd build/app/pipefwd]

EAL makes <runtime dir>/<prefix> (chmod 0700) and pipefwd removed that
directory's files and the directory at exit: `--file-prefix=../../tmp/v`
emptied and deleted /tmp/v. A victim directory in this test's own temp dir,
aimed at through `..` from EAL's runtime directory, in every way getopt lets
EAL read the option (`--file-prefix=P`, `--file-prefix P`, the abbreviation
`--file=P`, from the topology's eal list): start and --check exit 78 before
EAL runs (no DPDK line), the victim keeps its mode and its files; from the
topology the error is located (file:line:col). A prefix with '/', "." or
over 48 characters is refused the same way.

Cleanup removes only what EAL made: a plain prefix whose runtime directory
holds a file and a directory of someone else's before the start keeps them
after a clean exit, while EAL's own files (config, fbarray_*) are gone; a
run on a fresh plain prefix leaves no directory behind.
"""
import os
import re
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import Scratch, args_parser, finish  # noqa: E402

EAL = '[--no-huge, -m, "256", --no-pci, --no-telemetry, --log-level=lib.eal:warning]'
TOPO = """eal: {eal}
ports:
  p0: {{ device: net_null0 }}
  p1: {{ device: net_null1 }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1, p1: p0 }}, next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, xc, tx]
"""
LOCATED = re.compile(r"^\S+\.yaml:\d+:\d+: error: eal\[\d+\]: --file-prefix '.*' is not a plain name",
                     re.M)


def runtime_base():
    """EAL 22.11's runtime directory for this user (eal_create_runtime_dir)."""
    if os.getuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


def snapshot(d):
    """Mode of @d and the names and contents of what is in it."""
    st = os.stat(d)
    files = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        files[n] = open(p, "rb").read() if os.path.isfile(p) else "dir"
    return stat.S_IMODE(st.st_mode), files


def run(pipefwd, args, cwd, timeout=60):
    return subprocess.run([pipefwd] + args, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def main():
    args = args_parser(__doc__).parse_args()
    args.pipefwd = os.path.abspath(args.pipefwd)
    sc = Scratch("file_prefix")
    errors = []
    base = runtime_base()
    os.makedirs(base, mode=0o700, exist_ok=True)
    topo = sc.path("topology.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL))

    victim = sc.path("victim")
    os.mkdir(victim)
    os.chmod(victim, 0o755)
    with open(os.path.join(victim, "keep"), "w") as f:
        f.write("not pipefwd's\n")
    os.mkdir(os.path.join(victim, "sub"))
    before = snapshot(victim)
    rel = os.path.relpath(victim, os.path.realpath(base))     # ../../tmp/fault-.../victim

    # (label, pipefwd options, EAL arguments after --, whether the error is in the topology)
    cases = [
        ("--file-prefix=..", ["-q", "-d", "1"], [f"--file-prefix={rel}"], False),
        ("--file-prefix ..", ["-q", "-d", "1"], ["--file-prefix", rel], False),
        ("--file=.. (abbreviation)", ["-q", "-d", "1"], [f"--file={rel}"], False),
        ("--check --file-prefix=..", ["--check"], [f"--file-prefix={rel}"], False),
        ("absolute", ["-q", "-d", "1"], [f"--file-prefix={victim}"], False),
        ("dot", ["-q", "-d", "1"], ["--file-prefix=."], False),
        ("too long", ["-q", "-d", "1"], ["--file-prefix=" + "p" * 49], False),
    ]
    for label, opts, eal, _ in cases:
        p = run(args.pipefwd, opts + [topo, "--"] + eal, sc.dir)
        if p.returncode != 78:
            errors.append(f"{label}: exit {p.returncode}, want 78: {p.stderr[-800:]!r}")
        if "not a plain name" not in p.stderr:
            errors.append(f"{label}: stderr does not say why: {p.stderr[-800:]!r}")
        if "EAL:" in p.stderr:
            errors.append(f"{label}: EAL ran before the refusal: {p.stderr[-800:]!r}")
        now = snapshot(victim)
        if now != before:
            errors.append(f"{label}: the victim changed: {before} -> {now}")
            break

    # The same from the topology's eal list: located, in --check and at start.
    bad = sc.path("bad_prefix.yaml")
    with open(bad, "w") as f:
        f.write(TOPO.format(eal=f'[--no-huge, -m, "256", --no-pci, --file-prefix, "{rel}"]'))
    for opts in (["--check"], ["-q", "-d", "1"]):
        p = run(args.pipefwd, opts + [bad], sc.dir)
        if p.returncode != 78 or not LOCATED.search(p.stderr):
            errors.append(f"topology {opts}: exit {p.returncode}, want 78 with a located "
                          f"error: {p.stderr[-800:]!r}")
        if snapshot(victim) != before:
            errors.append(f"topology {opts}: the victim changed")

    # A plain prefix whose directory holds someone else's files: only EAL's go.
    prefix = f"robust_prefix_keep_{os.getpid()}"
    rdir = os.path.join(base, prefix)
    os.makedirs(rdir, mode=0o700, exist_ok=True)
    with open(os.path.join(rdir, "keep"), "w") as f:
        f.write("kept\n")
    os.makedirs(os.path.join(rdir, "sub"), exist_ok=True)
    try:
        p = run(args.pipefwd, ["-q", "-d", "1", topo, "--", f"--file-prefix={prefix}"], sc.dir)
        if p.returncode != 0:
            errors.append(f"plain prefix: exit {p.returncode}: {p.stderr[-800:]!r}")
        left = sorted(os.listdir(rdir)) if os.path.isdir(rdir) else None
        if left != ["keep", "sub"]:
            errors.append(f"plain prefix with foreign files: {rdir} holds {left} after exit, "
                          f"want ['keep', 'sub'] (EAL's own files removed, nothing else)")
    finally:
        subprocess.run(["rm", "-rf", rdir])

    # A fresh plain prefix: nothing left behind.
    prefix = f"robust_prefix_fresh_{os.getpid()}"
    rdir = os.path.join(base, prefix)
    p = run(args.pipefwd, ["-q", "-d", "1", topo, "--", f"--file-prefix={prefix}"], sc.dir)
    if p.returncode != 0:
        errors.append(f"fresh prefix: exit {p.returncode}: {p.stderr[-800:]!r}")
    if os.path.exists(rdir):
        errors.append(f"fresh prefix: {rdir} left behind: {os.listdir(rdir)}")
        subprocess.run(["rm", "-rf", rdir])

    finish("fault_file_prefix", sc, errors,
           f"{len(cases) + 2} hostile prefixes refused with exit 78, the victim unchanged; "
           "a plain prefix's foreign files kept")


if __name__ == "__main__":
    main()
