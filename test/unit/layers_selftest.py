#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-layers.py catches what its rules forbid, and only that.

A tree built in a temp dir: layers lo and hi, hi may include lo and the
system lib, lo only the system lib. Each way one allowed and one forbidden
include, for files and for <...> headers; then the forbidden ones removed.
Usage: layers_selftest.py scripts/check-layers.py
"""
import os
import subprocess
import sys
import tempfile

RULES = '''# rules
```layers
layer lo  lo/*
layer hi  hi/* extra/hi_too.h
lib dpdk  rte_*.h
lib system *
allow hi -> lo system
allow lo -> system
```
'''
FILES = {
    'lo/lo.h': '#include <stdint.h>\n',
    'lo/sub/deep.h': '#include "lo.h"\n',              # found by name: its own layer
    'hi/hi.h': '#include "lo.h"\n',                     # hi -> lo: allowed
    'extra/hi_too.h': '',                               # hi by its own glob
    'lo/a.c': '#include "lo.h"\n#include  "hi.h"\n  #  include <rte_mbuf.h>\n',
    'hi/b.c': '#include <rte_ring.h>\n#include "hi.h"\n#include "../lo/lo.h"\n',
    'lo/c.c': '#include "hi_too.h"\n#include "gen.h"\n',  # gen.h: no such file, a lib
}
WANT = [
    'hi/b.c:1: layer hi may not include <rte_ring.h> (dpdk) (rule hi -> lo system)',
    'lo/a.c:2: layer lo may not include hi/hi.h (hi) (rule lo -> system)',
    'lo/a.c:3: layer lo may not include <rte_mbuf.h> (dpdk) (rule lo -> system)',
    'lo/c.c:1: layer lo may not include extra/hi_too.h (hi) (rule lo -> system)',
]


def run(script, root):
    p = subprocess.run([sys.executable, script, '--root', root], capture_output=True, text=True)
    return p.returncode, sorted(p.stdout.splitlines()), p.stderr


def main():
    script = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix='layers_') as root:
        os.makedirs(os.path.join(root, 'docs'))
        with open(os.path.join(root, 'docs', 'layers.md'), 'w') as f:
            f.write(RULES)
        for path, text in FILES.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), 'w') as f:
                f.write(text)
        rc, out, err = run(script, root)
        assert rc == 1 and out == WANT, 'rc %d, got:\n%s\nwant:\n%s\n%s' % (
            rc, '\n'.join(out), '\n'.join(WANT), err)
        # Only the forbidden lines go: clean.
        for path, text in (('lo/a.c', '#include "lo.h"\n'), ('hi/b.c', '#include "hi.h"\n'),
                           ('lo/c.c', '#include "gen.h"\n')):
            with open(os.path.join(root, path), 'w') as f:
                f.write(text)
        rc, out, err = run(script, root)
        assert rc == 0 and out == [], 'clean tree: rc %d\n%s%s' % (rc, '\n'.join(out), err)
        # An unknown name in an allow line is a broken rule (exit 2), not a pass.
        with open(os.path.join(root, 'docs', 'layers.md'), 'w') as f:
            f.write(RULES.replace('allow lo -> system', 'allow lo -> sytem'))
        rc, out, err = run(script, root)
        assert rc == 2 and 'sytem' in err, 'bad rule: rc %d %s' % (rc, err)
    print('check-layers selftest: ok')


if __name__ == '__main__':
    main()
