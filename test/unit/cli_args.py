#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd's command line: `pipefwd [options] TOPOLOGY.yaml [-- EAL options]`.

An option placed after the topology (`pipefwd topo.yaml -d 6`) used to reach the
EAL silently; it must be refused with exit 64 (EX_USAGE) and a message naming it,
before any DPDK runtime file is made. The documented forms keep working.

usage: cli_args.py PIPEFWD FIXTURE_DIR
"""
import os
import subprocess
import sys
import tempfile


def main():
    pipefwd, fixdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    topo = os.path.join(fixdir, 'ok_minimal.yaml')
    prefix = f'cliargs_{os.getpid()}'
    eal = f'--file-prefix={prefix}'
    # (argv, exit status, text stderr must hold, text stdout must hold)
    cases = [
        ([topo, '-d', '6', '--'], 64, "'-d' after the topology file", ''),
        ([topo, '-d', '6', '--', eal], 64, "'-d' after the topology file", ''),
        ([topo, '-q'], 64, "'-q' after the topology file", ''),
        ([topo, '--check'], 64, "'--check' after the topology file", ''),
        ([topo, eal], 64, f"'{eal}' after the topology file", ''),
        ([topo, topo], 64, 'after the topology file', ''),
        (['-d', 'nan', topo], 64, 'not a number', ''),
        (['--no-such-option', topo], 64, 'usage: pipefwd', ''),
        ([], 64, 'usage: pipefwd', ''),
        # documented forms
        (['--check', topo], 0, '', ': ok:'),
        (['--check', topo, '--', eal], 0, '', ': ok:'),
        (['-c', '-q', '-d', '6', '-j', 'x.json', topo, '--', eal, '--no-huge'], 0, '', ': ok:'),
        (['--check', '--', topo], 0, '', ': ok:'),
        (['--help'], 0, '', 'usage: pipefwd'),
        # issue 32 item 9: an lcore set after '--' replaces pipefwd's own --lcores (EAL
        # refused the pair: "Option -l is ignored, because (--lcores) is set!", exit 1),
        # and is checked against the lcores map and the main lcore
        (['-q', '-d', '1', topo, '--', eal, '-l', '0-1'], 0, '', ''),
        (['--check', topo, '--', eal, '-l', '0'], 78,
         "lcore 1 is not in EAL's lcore set (-l 0)", ''),
        (['--check', topo, '--', eal, '--main-lcore', '1'], 78, 'lcore 1 is the main lcore', ''),
        (['--check', topo, '--', eal, '-l', '1-2'], 78,
         'lcore 1 is the main lcore', ''),
        (['--check', topo, '--', eal, '-m', '1G'], 78, "-m '1G': a size in megabytes", ''),
        # issue 32 item 10: --capture-dir checked at start, not at the first capture
        (['-d', '1', '--capture-dir', '', topo, '--', eal], 64, '--capture-dir: empty: give a directory', ''),
        (['-d', '1', '--capture-dir', '/nonexistent/caps', topo, '--', eal], 64,
         '--capture-dir /nonexistent/caps: No such file or directory', ''),
        (['-d', '1', '--capture-dir', topo, topo, '--', eal], 64,
         f'--capture-dir {topo}: a regular file, not a directory', ''),
        (['--capture-dir', '/tmp/a\nb\x1b[31m', '--check', topo], 64,
         '--capture-dir: a control character at offset 6', ''),
        (['--check', '--capture-dir', fixdir, topo], 0, '', ': ok:'),
    ]
    failures = 0
    for argv, status, err, out in cases:
        with tempfile.TemporaryDirectory(prefix='cliargs_') as cwd:
            p = subprocess.run([pipefwd] + argv, cwd=cwd, capture_output=True, text=True,
                               timeout=30)
            left = os.listdir(cwd)
        errs = []
        if p.returncode != status:
            errs.append(f'exit {p.returncode}, want {status}')
        if err not in p.stderr:
            errs.append(f'stderr lacks {err!r}: {p.stderr[-300:]!r}')
        if status != 0 and 'Traceback' in p.stderr + p.stdout:
            errs.append('traceback')
        if out not in p.stdout:
            errs.append(f'stdout lacks {out!r}: {p.stdout[-300:]!r}')
        if left:
            errs.append(f'created files: {left}')
        for d in ('/var/run/dpdk', os.path.join(os.environ.get('XDG_RUNTIME_DIR', '/tmp'),
                                                  'dpdk')):
            if os.path.exists(os.path.join(d, prefix)):
                errs.append(f'created DPDK runtime dir {d}/{prefix}')
        shown = " ".join(argv).encode("unicode_escape").decode()
        print(f'{"ok" if not errs else "FAIL":4} pipefwd {shown}')
        for e in errs:
            print('     ' + e)
        failures += bool(errs)
    print(f'{len(cases) - failures}/{len(cases)} command lines ok')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
