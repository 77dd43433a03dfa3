#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd --check on every config fixture, as a user runs it.

Each bad_*.yaml must: exit 78 (EX_CONFIG), print nothing on stdout, print
exactly its "# expect: L:C: message" lines on stderr as
"file:line:col: error: message" (line 0 means "file: error: message"),
followed by the "file: N errors" count line; create no file (no DPDK runtime
directory, nothing in the working directory); and use under 100 ms of CPU.
Each ok_*.yaml must exit 0 with its summary on stdout and nothing on stderr.

usage: check_fixtures.py PIPEFWD FIXTURE_DIR
"""
import os
import re
import resource
import subprocess
import sys
import tempfile

# 100 ms of CPU (reliability.md G7); a sanitizer build (run-tests.sh sets
# ASAN_OPTIONS for it) instruments every access and gets four times that.
LIMIT_S = 0.100 * (4 if os.environ.get('ASAN_OPTIONS') else 1)
TRIES = 3   # the machine is shared: a run counts as fast if any of 3 is


def expected_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            m = re.match(r'# expect: (\d+):(\d+): (.*)$', line.rstrip('\n'))
            if not m:
                break
            ln, col, msg = int(m.group(1)), int(m.group(2)), m.group(3)
            out.append(f'{path}: error: {msg}' if ln == 0 else f'{path}:{ln}:{col}: error: {msg}')
    return out


def runtime_dirs(prefix):
    """Where EAL would put its runtime files for @prefix (root and non-root)."""
    base = ['/var/run/dpdk', '/run/dpdk']
    if os.environ.get('XDG_RUNTIME_DIR'):
        base.append(os.path.join(os.environ['XDG_RUNTIME_DIR'], 'dpdk'))
    base.append('/tmp/dpdk')
    return [os.path.join(b, prefix) for b in base]


def run(pipefwd, path, cwd, prefix):
    """Run --check; returns (process, CPU seconds it used). CPU time, not wall
    time: on a busy machine the wall clock measures the neighbours."""
    best, proc = None, None
    for _ in range(TRIES):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([pipefwd, '--check', path, '--', f'--file-prefix={prefix}'],
                              cwd=cwd, capture_output=True, text=True, timeout=30)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        dt = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        best = dt if best is None else min(best, dt)
        if best < LIMIT_S:
            break
    return proc, best


def main():
    pipefwd, fixdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sorted(n for n in os.listdir(fixdir) if n.endswith('.yaml'))
    prefix = f'ftests_chk_{os.getpid()}'
    default_prefix_dirs = [d for d in runtime_dirs('pipefwd') if not os.path.exists(d)]
    failures, slowest = [], 0.0

    for name in names:
        path = os.path.join(fixdir, name)
        bad = name.startswith('bad_')
        with tempfile.TemporaryDirectory(prefix='ftests_chk_') as cwd:
            proc, dt = run(pipefwd, path, cwd, prefix)
            left = os.listdir(cwd)
        slowest = max(slowest, dt)
        errs = []
        if bad:
            want = expected_lines(path)
            if not want:
                errs.append('no "# expect:" header')
            n = len(want)
            want.append(f'{path}: {n} error{"" if n == 1 else "s"}')
            got = proc.stderr.splitlines()
            if proc.returncode != 78:
                errs.append(f'exit status {proc.returncode}, want 78')
            if proc.stdout != '':
                errs.append(f'stdout not empty: {proc.stdout!r}')
            if got != want:
                errs.append('stderr differs:\n    want: ' + '\n          '.join(want) +
                            '\n    got:  ' + '\n          '.join(got))
        else:
            if proc.returncode != 0:
                errs.append(f'exit status {proc.returncode}, want 0')
            if proc.stderr != '':
                errs.append(f'stderr not empty: {proc.stderr!r}')
            if not proc.stdout.startswith(f'{path}: ok:'):
                errs.append(f'unexpected stdout: {proc.stdout!r}')
        if dt >= LIMIT_S:
            errs.append(f'took {dt * 1000:.1f} ms of CPU (limit {LIMIT_S * 1000:.0f} ms)')
        if left:
            errs.append(f'created files in the working directory: {left}')
        made = [d for d in runtime_dirs(prefix) + default_prefix_dirs if os.path.exists(d)]
        if made:
            errs.append(f'created DPDK runtime files: {made}')
        status = 'ok' if not errs else 'FAIL'
        print(f'{status:4} {name} ({dt * 1000:.1f} ms)')
        for e in errs:
            print('     ' + e)
        if errs:
            failures.append(name)
    if os.path.exists('/tmp/ftests_out.pcap'):
        failures.append('bad_rx_pcap.yaml created /tmp/ftests_out.pcap')
    print(f'{len(names) - len(failures)}/{len(names)} fixtures ok, slowest {slowest * 1000:.1f} ms')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
