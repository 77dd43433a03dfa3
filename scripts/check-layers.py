#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check every #include against the layering rules of docs/layers.md.

Each .c/.h file under ROOT belongs to the first layer whose path glob
matches it. A quoted include is looked up next to the includer, then by
file name anywhere in the tree (the build puts every folder on the include
path); an include found in no file, and every <...> include, belongs to the
first `lib` whose glob matches its name. A file may include its own layer
and what its layer's `allow` line names; anything else is printed as

    file:line: layer A may not include B (rule A -> ...)

Usage: check-layers.py [--root DIR] [--rules FILE]   (exit 0 clean, 1 violations, 2 bad rules)
"""
import argparse
import fnmatch
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SKIP_DIRS = {'subprojects'}


def parse_rules(path):
    """The ```layers block of @path: layers and libs (name, globs), in order; allow arrows."""
    text = open(path, encoding='utf-8').read()
    m = re.search(r'^```layers\n(.*?)^```', text, re.S | re.M)
    if m is None:
        sys.exit('%s: no ```layers block' % path)
    layers, libs, allow = [], [], {}
    for n, line in enumerate(m.group(1).splitlines(), text[:m.start()].count('\n') + 2):
        words = line.split('#')[0].split()
        if not words:
            continue
        kind = words[0]
        if kind in ('layer', 'lib') and len(words) >= 3:
            (layers if kind == 'layer' else libs).append((words[1], words[2:]))
        elif kind == 'allow' and len(words) >= 3 and words[2] == '->':
            allow[words[1]] = set(words[3:])
        else:
            print('%s:%d: cannot read rule: %s' % (path, n, line.strip()), file=sys.stderr)
            sys.exit(2)
    names = {name for name, _ in layers + libs}
    for who, targets in allow.items():
        for t in (targets - {'*'}) | {who}:
            if t not in names:
                print('%s: allow %s names unknown layer or lib %s' % (path, who, t),
                      file=sys.stderr)
                sys.exit(2)
    return layers, libs, allow


def first_match(name, groups):
    for group, globs in groups:
        if any(fnmatch.fnmatchcase(name, g) for g in globs):
            return group
    return None


def sources(root):
    for top, dirs, files in os.walk(root):
        # Not .git, not a build directory (meson's generated headers are no layer's).
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith('.') and
                         not os.path.isdir(os.path.join(top, d, 'meson-private')))
        for f in sorted(files):
            if f.endswith(('.c', '.h')):
                yield os.path.relpath(os.path.join(top, f), root)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.dirname(here))
    ap.add_argument('--rules')
    args = ap.parse_args()
    rules = args.rules or os.path.join(args.root, 'docs', 'layers.md')
    layers, libs, allow = parse_rules(rules)
    files = {f: first_match(f, layers) for f in sources(args.root)}
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    bad = 0
    for f, layer in files.items():
        if layer is None:
            continue
        ok = allow.get(layer, set()) | {layer}
        with open(os.path.join(args.root, f), encoding='utf-8', errors='replace') as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if m is None:
                    continue
                name, target = m.group(2), None
                if m.group(1) == '"':
                    near = os.path.normpath(os.path.join(os.path.dirname(f), name))
                    hits = [near] if near in files else by_name.get(os.path.basename(name), [])
                    if len(hits) > 1:
                        print('%s:%d: "%s" is ambiguous: %s' % (f, n, name, ' '.join(hits)))
                        bad += 1
                        continue
                    if hits:
                        target, what = files[hits[0]], hits[0]
                if target is None:
                    target, what = first_match(name, libs), '<%s>' % name
                if '*' in ok or target in ok:
                    continue
                print('%s:%d: layer %s may not include %s (%s) (rule %s -> %s)' %
                      (f, n, layer, what, target, layer, ' '.join(sorted(ok - {layer}))))
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
