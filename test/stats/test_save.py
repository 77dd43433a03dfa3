#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pipefwd-ctl changes --save` writes every file or none, can be repeated,
writes through symlinks and edits the shipped conf/default.yaml (issue 32
items 4 and 5, issue 33 item 6).

 1. The YAML planner on layouts a person writes (no pipefwd): a new key in a
    block stage, the last item of a list deleted, flow lists (one line and
    several), a flow stage, a block-mapping item. The expected texts are
    written here by hand.
 2. A pipefwd whose topology lives in a directory the save sees read-only (a
    read-only bind mount in a private mount namespace: tests run as root,
    so permissions would not stop the write) and whose route file is
    writable: a route (route file) and a rule (topology) are added; the save
    fails, twice, and leaves both files as they were (same inode, same
    bytes), no temporary file, the two changes kept. A route file that
    already holds the route (what the old half-save left) refuses the save
    without appending it again. Then the save runs: the route once, the
    rule, --check passes; a second save changes nothing. The acl's rules
    file is a symlink: the save writes its target and the link stays.
 3. A pipefwd on a byte-for-byte copy of conf/default.yaml, started through
    a symlink: a static MAC into the flow-mapping stage l2, a route added and
    one deleted, a rule added; the save keeps every other line (so every
    comment) byte for byte, the link stays a link, PyYAML reads the file as
    the original with exactly those changes, and the saved file runs them.

usage: test_save.py PIPEFWD PIPEFWD_CTL
"""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml     # PyYAML: the model reads the files independently of ruamel.yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
from pftest import Ctl, dpdk_rundir, finish, stop_pipefwd, write_pcap, numbered_udp  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PREFIX = "csave_%d" % os.getpid()
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def load_ctl():
    loader = importlib.machinery.SourceFileLoader("pipefwd_ctl", CTL)
    spec = importlib.util.spec_from_loader("pipefwd_ctl", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def at(text, needle):
    """(1-based line, column) of @needle's first character in @text."""
    i = text.index(needle)
    return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)


def planner_cases():
    m = load_ctl()

    def ch(op, stage, table, item=None, where=None, text=None):
        line, col = at(text, where) if where else (0, -1)
        return {"op": op, "stage": stage, "table": table, "item": item or "", "line": line,
                "col": col, "entry": item or where, "file": "t.yaml"}

    cases = []
    t = ("stages:\n  acl:\n    type: acl   # firewall\n    default: deny\n    next: lpm\n"
         "  lpm: { type: lpm, next: tx }\n")
    cases.append(("new key in a block stage, new key in a flow stage", t,
                  [ch("add", "acl", "rules", '"permit proto tcp"'),
                   ch("add", "lpm", "routes", "{ prefix: 10.0.0.0/8, via: n1 }")],
                  "stages:\n  acl:\n    type: acl   # firewall\n    default: deny\n"
                  '    rules:\n      - "permit proto tcp"\n    next: lpm\n'
                  "  lpm: { type: lpm, next: tx, routes: [{ prefix: 10.0.0.0/8, via: n1 }] }\n"))
    t = ("stages:\n  l2:\n    type: l2fib\n    static:   # pinned\n"
         '      - { mac: "02:00:00:00:00:01", port: a }   # the router\n'
         "    # more later\n    next: tx\n")
    cases.append(("the only item deleted", t,
                  [ch("del", "l2", "macs", where="{ mac", text=t)],
                  "stages:\n  l2:\n    type: l2fib\n    static: []   # pinned\n"
                  "    # more later\n    next: tx\n"))
    t = 'stages:\n  acl: { type: acl, rules: [ "permit proto udp", "deny proto tcp" ], next: l }\n'
    cases.append(("flow list in a flow stage", t,
                  [ch("del", "acl", "rules", where='"permit', text=t),
                   ch("add", "acl", "rules", '"permit proto icmp"')],
                  'stages:\n  acl: { type: acl, rules: [ "deny proto tcp", "permit proto icmp" ],'
                  ' next: l }\n'))
    t = ("stages:\n  acl:\n    type: acl\n    rules: [\"permit proto udp\",\n"
         "            \"deny proto tcp\"]\n    next: l\n")
    cases.append(("flow list on two lines", t,
                  [ch("add", "acl", "rules", '"permit proto icmp"')],
                  "stages:\n  acl:\n    type: acl\n    rules: [\"permit proto udp\",\n"
                  "            \"deny proto tcp\",\n            \"permit proto icmp\"]\n"
                  "    next: l\n"))
    t = ("stages:\n  lpm:\n    type: lpm\n    routes:\n      - prefix: 10.1.0.0/16\n"
         "        via: n1\n      # the lab\n      - prefix: 10.2.0.0/16\n        via: n2\n"
         "    next: tx\n")
    cases.append(("block-mapping items", t,
                  [ch("del", "lpm", "routes", where="prefix: 10.1", text=t),
                   ch("add", "lpm", "routes", "{ prefix: 10.3.0.0/16, via: n1 }")],
                  "stages:\n  lpm:\n    type: lpm\n    routes:\n      # the lab\n"
                  "      - prefix: 10.2.0.0/16\n        via: n2\n"
                  "      - { prefix: 10.3.0.0/16, via: n1 }\n    next: tx\n"))
    for name, text, changes, want in cases:
        try:
            got = m.plan_topology("t.yaml", text, changes)
        except m.TelemetryError as e:
            got = "refused: %s" % e
        check(got == want, "planner, %s:\n--- got\n%s--- want\n%s" % (name, got, want))


TOPO_A = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  b0: {{ device: "net_pcap0,rx_pcap={tmp}/in.pcap", mac: "02:00:00:00:00:10",
        ipv4: 192.168.0.1/24 }}
  b1: {{ device: "net_null0", mac: "02:00:00:00:00:11", ipv4: 172.17.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [b0], next: {{ ipv4: acl }} }}
  acl: {{ type: acl, rules_file: {tmp}/tables/rules.txt, default: deny, next: acl2 }}
  acl2:
    type: acl
    default: deny
    rules:
      - "permit proto udp"    # the lab's traffic
    next: lpm
  lpm:
    type: lpm
    nexthops:
      n1: {{ port: b1, mac: "02:00:00:00:01:01" }}
    routes_file: {tmp}/tables/routes.txt
    next: tx
  tx: {{ type: tx, ports: [b0, b1] }}
lcores:
  1: [rx, acl, acl2, lpm, tx]
"""
ROUTES = "# routes of the lab\n10.60.0.0/16 n1\n"
RULES = "# the edge\npermit proto udp\n"


def start(topo, cwd, prefix, log_path):
    log = open(log_path, "w")
    proc = subprocess.Popen([PIPEFWD, topo, "--", "--file-prefix=" + prefix], cwd=cwd,
                            stdout=log, stderr=subprocess.STDOUT)
    sock = os.path.join(dpdk_rundir(prefix), "dpdk_telemetry.v2")
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None:
        if os.path.exists(sock) and subprocess.run(
                [CTL, "--file-prefix", prefix, "config"], capture_output=True).returncode == 0:
            return proc, log
        time.sleep(0.2)
    check(False, "pipefwd did not start: %s" % open(log_path).read()[-2000:])
    return proc, log


def snapshot(*paths):
    """(inode, bytes) of each file: the same inode means the file was not replaced."""
    return [(os.stat(p).st_ino, open(p, "rb").read()) for p in paths]


def leftovers(*dirs):
    return sorted(f for d in dirs for f in os.listdir(d) if f.endswith((".tmp", ".old")))


def read_only_save(ctl_args, ro_dir):
    """pipefwd-ctl in a private mount namespace where @ro_dir is read-only."""
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"')
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                           "sh", ro_dir] + ctl_args, capture_output=True, text=True, timeout=120)


def scenario_files(tmp):
    ro, tables, real = (os.path.join(tmp, d) for d in ("ro", "tables", "real"))
    for d in (ro, tables, real):
        os.makedirs(d)
    write_pcap(os.path.join(tmp, "in.pcap"), [numbered_udp(i) for i in range(8)])
    routes, rules_link = os.path.join(tables, "routes.txt"), os.path.join(tables, "rules.txt")
    rules_real = os.path.join(real, "rules-real.txt")
    with open(routes, "w") as f:
        f.write(ROUTES)
    with open(rules_real, "w") as f:
        f.write(RULES)
    os.symlink(rules_real, rules_link)
    topo = os.path.join(ro, "topo.yaml")
    with open(topo, "w") as f:
        f.write(TOPO_A.format(tmp=tmp))
    prefix = PREFIX + "_a"
    ctl = Ctl(CTL, prefix, check)
    proc, log = start(topo, tmp, prefix, os.path.join(tmp, "a.log"))
    try:
        ctl("route-add", "lpm", "10.50.0.0/16", "n1")          # into routes.txt
        ctl("rule-add", "acl2", "permit", "proto", "tcp")        # into the topology
        before = snapshot(routes, topo)
        save = [CTL, "--file-prefix", prefix, "--timeout", "20", "changes", "--save"]
        for attempt in (1, 2):
            r = read_only_save(save, ro)
            check(r.returncode == 1 and "no file changed" in r.stderr and
                  "Traceback" not in r.stderr,
                  "read-only save %d: rc %d, %s" % (attempt, r.returncode, r.stderr))
            check(snapshot(routes, topo) == before,
                  "read-only save %d changed a file: routes.txt %r" % (
                      attempt, open(routes).read()))
            check(leftovers(ro, tables) == [], "left over: %s" % leftovers(ro, tables))
            check(ctl.json("changes")["head"]["unsaved"] == 2, "changes lost by a failed save")
        # What the old half-save left: the route already in routes.txt.
        st = os.stat(routes)
        with open(routes, "a") as f:
            f.write("10.50.0.0/16 n1\n")
        r = ctl("changes", "--save", ok=False)
        check(r.returncode == 1 and "changed on disk since pipefwd loaded it" in r.stderr,
              "save over a changed routes.txt: rc %d %s" % (r.returncode, r.stderr))
        check(open(routes).read() == ROUTES + "10.50.0.0/16 n1\n",
              "save over a changed routes.txt wrote it: %r" % open(routes).read())
        with open(routes, "w") as f:
            f.write(ROUTES)
        os.utime(routes, ns=(st.st_atime_ns, st.st_mtime_ns))
        # Through the symlink: the rules file's target takes the rule.
        ctl("rule-add", "acl", "deny", "dst", "10.9.0.0/16")
        r = ctl("changes", "--save")
        check("wrote %s" % routes in r.stdout and "wrote %s" % topo in r.stdout and
              "wrote %s (the link's target %s)" % (rules_link, rules_real) in r.stdout and
              "applied" in r.stdout, "save output: %r" % r.stdout)
        check(open(routes).read() == ROUTES + "10.50.0.0/16 n1\n",
              "saved routes.txt: %r" % open(routes).read())
        check(os.path.islink(rules_link) and os.readlink(rules_link) == rules_real,
              "the rules symlink was replaced")
        check(open(rules_real).read() == RULES + "deny dst 10.9.0.0/16\n",
              "saved rules (link target): %r" % open(rules_real).read())
        doc = yaml.safe_load(open(topo))
        check(doc["stages"]["acl2"]["rules"] == ["permit proto udp", "permit proto tcp"],
              "saved acl2 rules: %s" % doc["stages"]["acl2"])
        check(leftovers(ro, tables, real) == [], "left over: %s" % leftovers(ro, tables, real))
        c = subprocess.run([PIPEFWD, "--check", topo], capture_output=True, text=True)
        check(c.returncode == 0, "--check after the save: %s %s" % (c.stdout, c.stderr))
        after = snapshot(routes, topo, rules_real)
        r = ctl("changes", "--save")
        check(r.stdout.startswith("0 unsaved changes") and
              snapshot(routes, topo, rules_real) == after, "a second save: %r" % r.stdout)
        check(ctl.json("route", "lpm", "10.50.0.1").get("prefix") == "10.50.0.0/16",
              "the saved route does not run")
    finally:
        rc = stop_pipefwd(proc, log, dpdk_rundir(prefix))
    check(rc == 0, "pipefwd exit %d: %s" % (rc, open(os.path.join(tmp, "a.log")).read()[-2000:]))


def scenario_default(tmp):
    d = os.path.join(tmp, "default")
    os.makedirs(os.path.join(d, "conf"))
    os.makedirs(os.path.join(d, "build", "run"))
    os.symlink(os.path.join(ROOT, "conf", "pcap"), os.path.join(d, "conf", "pcap"))
    real = os.path.join(d, "conf", "default.yaml")
    shutil.copyfile(os.path.join(ROOT, "conf", "default.yaml"), real)
    link = os.path.join(d, "pipefwd.yaml")
    os.symlink("conf/default.yaml", link)
    orig = open(real).read()
    prefix = PREFIX + "_d"
    ctl = Ctl(CTL, prefix, check)
    proc, log = start(link, d, prefix, os.path.join(tmp, "d.log"))
    try:
        ctl("mac-add", "l2", "02:00:00:00:aa:05", "p3")          # l2 is a flow mapping
        ctl("route-add", "lpm", "10.2.0.0/16", "lab_gw")
        ctl("route-del", "lpm", "192.168.0.2/32")
        ctl("rule-add", "acl", "permit", "src", "10.1.0.0/16")
        r = ctl("changes", "--save")
        check("wrote %s" % link in r.stdout and "applied" in r.stdout,
              "save of default.yaml: %r %r" % (r.stdout, r.stderr))
        check(os.path.islink(link), "the topology symlink was replaced")
        new = open(real).read()
        # Every line but the deleted route and the l2 stage is kept, in order.
        gone = {"      - { prefix: 192.168.0.2/32, via: lan_host }\n",
                "  l2: { type: l2fib, ports: [p2, p3], table_size: 65536, next: tx }\n"}
        kept = [l for l in orig.splitlines(keepends=True) if l not in gone]
        it = iter(new.splitlines(keepends=True))
        missing = [l for l in kept if not any(l == x for x in it)]
        check(not missing, "lines of default.yaml lost or moved: %s" % missing[:5])
        check(all(l in new for l in orig.splitlines() if "#" in l), "a comment changed")
        want = yaml.safe_load(orig)
        st = want["stages"]
        st["l2"]["static"] = [{"mac": "02:00:00:00:aa:05", "port": "p3", "domain": "default"}]
        st["lpm"]["routes"] = [{"prefix": "10.1.0.0/16", "via": "lab_gw"},
                               {"prefix": "10.2.0.0/16", "via": "lab_gw"}]
        st["acl"]["rules"].append("permit src 10.1.0.0/16")
        check(yaml.safe_load(new) == want, "saved default.yaml reads as:\n%s" % new)
        c = subprocess.run([PIPEFWD, "--check", link], cwd=d, capture_output=True, text=True)
        check(c.returncode == 0, "--check of the saved default.yaml: %s %s" % (c.stdout,
                                                                             c.stderr))
        rows = ctl.json("macs", "l2", "--all").get("rows", [])
        check(any(x["mac"] == "02:00:00:00:aa:05" and x["type"] == "static" for x in rows),
              "the saved static MAC does not run: %s" % rows)
        check(ctl.json("route", "lpm", "10.2.0.1").get("prefix") == "10.2.0.0/16",
              "the saved route does not run")
    finally:
        rc = stop_pipefwd(proc, log, dpdk_rundir(prefix))
    check(rc == 0, "pipefwd exit %d: %s" % (rc, open(os.path.join(tmp, "d.log")).read()[-2000:]))


def main():
    planner_cases()
    tmp = tempfile.mkdtemp(prefix="pf_save_")
    scenario_files(tmp)
    scenario_default(tmp)
    if not FAILS:
        print("ok")
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
