# SPDX-License-Identifier: BSD-3-Clause
"""What the routing-daemon tests share: namespaces wired to pipefwd's net_tap
ports, routing daemons (FRR, BIRD) in namespaces, UDP flows and their sinks,
pipefwd-ctl. Every name carries the test's prefix; everything is under the
test's own temp dir and namespaces.
"""
import json
import os
import pwd
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CTL = os.path.join(ROOT, "scripts", "pipefwd-ctl")

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def sh(*cmd, ns=None, ok=True, timeout=30):
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if ok and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(full), r.stderr.strip()))
    return r


def wait_for(pred, seconds, step=0.3):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


class Ctl:
    """pipefwd-ctl --json against one pipefwd."""

    def __init__(self, file_prefix):
        self.prefix = file_prefix

    def json(self, *args):
        r = subprocess.run([sys.executable, CTL, "--file-prefix", self.prefix, "--json"] +
                           list(args), capture_output=True, text=True, timeout=30)
        return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None

    def text(self, *args):
        r = subprocess.run([sys.executable, CTL, "--file-prefix", self.prefix] + list(args),
                           capture_output=True, text=True, timeout=30)
        return r.stdout

    def routes(self, stage="lpm"):
        """prefix -> [rows] of the stage's routes page (configured, connected, learnt)."""
        out = {}
        for row in (self.json("routes", stage, "--all") or {}).get("rows", []):
            out.setdefault(row.get("prefix"), []).append(row)
        return out

    def source(self, name):
        return (self.json("sources") or {}).get(name, {})

    def stage(self, name):
        for st in (self.json("stages") or {}).values():
            if isinstance(st, dict) and st.get("name") == name:
                return st
        return {}


class Wire:
    """pipefwd in namespace PFX+'w', each port a net_tap bridged to a veth whose
    other end is a host namespace."""

    def __init__(self, pfx):
        self.pfx = pfx
        self.ns_w = pfx + "w"
        self.namespaces = [self.ns_w]
        self.links = {}   # port -> (tap, bridge, host ns, host ifname)
        sh("ip", "netns", "add", self.ns_w)

    def namespace(self, name):
        ns = self.pfx + name
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        self.namespaces.append(ns)
        return ns

    def host(self, port, name, mac, addrs, gw4=None, gw6=None, ifname="eth0"):
        """Host namespace @name on @port's link: @ifname with @mac and @addrs."""
        ns = self.namespace(name) if self.pfx + name not in self.namespaces else self.pfx + name
        n = port[1:]
        br, v0 = self.pfx + "b" + n, self.pfx + "v" + n
        sh("ip", "link", "add", v0, "type", "veth", "peer", "name", ifname, "netns", ns,
           ns=self.ns_w)
        sh("ip", "link", "add", br, "type", "bridge", ns=self.ns_w)
        sh("ip", "link", "set", v0, "master", br, "up", ns=self.ns_w)
        sh("ip", "link", "set", br, "up", ns=self.ns_w)
        # A veth hands AF_PACKET frames with partial checksums: the host sums them.
        sh("ethtool", "-K", ifname, "tx", "off", ns=ns)
        sh("ip", "link", "set", ifname, "address", mac, ns=ns)
        for a in addrs:
            sh("ip", "addr", "add", a, "dev", ifname, *(["nodad"] if ":" in a else []), ns=ns)
        sh("ip", "link", "set", ifname, "up", ns=ns)
        if gw4:
            sh("ip", "route", "add", "default", "via", gw4, ns=ns)
        if gw6:
            sh("ip", "-6", "route", "add", "default", "via", gw6, ns=ns)
        self.links[port] = (self.pfx + "t" + n, br, ns, ifname)
        return ns

    def tap_names(self):
        return {p: v[0] for p, v in self.links.items()}

    def attach(self, log_path, seconds=30):
        """Put pipefwd's taps on their bridges once pipefwd made them."""
        for i, (port, (tap, br, _, _)) in enumerate(sorted(self.links.items())):
            if not wait_for(lambda: sh("ip", "link", "show", tap, ns=self.ns_w,
                                       ok=False).returncode == 0, seconds):
                print(open(log_path).read()[-3000:])
                return False
            # The tap's kernel end has the port's MAC: the bridge would keep frames to it.
            sh("ip", "link", "set", tap, "address", "02:00:00:ff:00:%02x" % i, ns=self.ns_w)
            sh("ip", "link", "set", tap, "master", br, "up", ns=self.ns_w)
        return True

    def link(self, port, up):
        sh("ip", "link", "set", self.links[port][0], "up" if up else "down", ns=self.ns_w)

    def cleanup(self):
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "pids", ns], capture_output=True)
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                subprocess.run(["kill", "-9", pid], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class Frr:
    """FRR daemons (zebra, bgpd, ...) in a namespace, with their own files."""

    def __init__(self, ns, d, confs, fpm=False):
        self.ns, self.dir, self.fpm = ns, d, fpm
        self.procs = {}
        os.makedirs(d, exist_ok=True)
        for daemon, text in confs.items():
            with open(os.path.join(d, daemon + ".conf"), "w") as f:
                f.write(text.replace("@DIR@", d))
        u = pwd.getpwnam("frr")
        for p in [d] + [os.path.join(d, x) for x in os.listdir(d)]:
            os.chown(p, u.pw_uid, u.pw_gid)

    def start(self, daemon):
        d = self.dir
        args = ["/usr/lib/frr/" + daemon, "-f", os.path.join(d, daemon + ".conf"),
                "-i", os.path.join(d, daemon + ".pid"), "--vty_socket", d,
                "-z", os.path.join(d, "zserv.api")]
        if daemon == "zebra" and self.fpm:
            args += ["-M", "dplane_fpm_nl"]
        log = open(os.path.join(d, daemon + ".out"), "a")
        self.procs[daemon] = subprocess.Popen(["ip", "netns", "exec", self.ns] + args,
                                              stdout=log, stderr=subprocess.STDOUT)
        if daemon == "zebra":
            wait_for(lambda: os.path.exists(os.path.join(d, "zserv.api")), 10, 0.1)

    def stop(self, daemon, sig=9):
        p = self.procs.pop(daemon, None)
        if p is not None:
            p.send_signal(sig)
            p.wait(timeout=20)
        if daemon == "zebra":
            try:
                os.unlink(os.path.join(self.dir, "zserv.api"))
            except OSError:
                pass

    def vtysh(self, *cmds):
        args = ["vtysh", "--vty_socket", self.dir]
        for c in cmds:
            args += ["-c", c]
        return sh(*args, ns=self.ns, ok=False).stdout

    def stop_all(self):
        for daemon in list(self.procs):
            self.stop(daemon)

    def logs(self):
        out = ""
        for f in sorted(os.listdir(self.dir)):
            if f.endswith(".log") or f.endswith(".out"):
                out += "== %s/%s\n%s\n" % (self.ns, f, open(os.path.join(self.dir, f)).read()[-1500:])
        return out


def frr_available():
    return os.path.exists("/usr/lib/frr/zebra") and os.path.exists("/usr/lib/frr/bgpd") and \
        shutil.which("vtysh") is not None


# A UDP sink: which source ports reached it, for @seconds.
UDP_SINK = """
import json, socket, sys, time
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], int(sys.argv[3]))); s.settimeout(0.3)
seen = {}; end = time.time() + float(sys.argv[4])
while time.time() < end:
    try:
        d, a = s.recvfrom(100)
        seen[a[1]] = seen.get(a[1], 0) + 1
    except socket.timeout:
        pass
open(sys.argv[1], "w").write(json.dumps(seen))
"""

# N flows (source ports BASE..BASE+N-1), K datagrams each.
UDP_SEND = """
import socket, sys, time
src, dst, port, base, n, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5]), int(sys.argv[6])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
for i in range(n):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((src, base + i))
    for j in range(k):
        s.sendto(b"x" * 32, (dst, port))
    s.close()
    if i % 64 == 63:
        time.sleep(0.01)
"""


def flows(tmp, tag, sender_ns, src, dst, sinks, n, k=3, seconds=5, base=20000, port=7000):
    """Send @n flows from @src to @dst; @sinks: name -> namespace listening on @dst.
    Returns name -> {source port: datagrams}."""
    outs, procs = {}, []
    for name, ns in sinks.items():
        outs[name] = os.path.join(tmp, "%s.%s.json" % (tag, name))
        procs.append(subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c",
                                       UDP_SINK, outs[name], dst, str(port), str(seconds)]))
    time.sleep(0.8)
    sh(sys.executable, "-c", UDP_SEND, src, dst, str(port), str(base), str(n), str(k),
       ns=sender_ns, timeout=60)
    for p in procs:
        p.wait(timeout=seconds + 20)
    got = {}
    for name in sinks:
        try:
            got[name] = {int(p): c for p, c in json.load(open(outs[name])).items()}
        except (OSError, ValueError):
            got[name] = {}
    return got


def can_run(*tools):
    """Root and @tools on PATH; else says why (the caller exits 77: skipped)."""
    if os.geteuid() == 0 and all(shutil.which(t) for t in tools):
        return True
    print("skipped: needs root and %s" % ", ".join(tools))
    return False


def teardown(proc, wire, tmp):
    """A test's end, however it ends: pipefwd killed if still running, the
    namespaces and the temp dir gone."""
    if proc is not None:
        proc.kill()
        proc.wait()
    wire.cleanup()
    shutil.rmtree(tmp, ignore_errors=True)


def start_pipefwd(pipefwd, ns, topo, file_prefix, log_path):
    log = open(log_path, "w")
    return subprocess.Popen(["ip", "netns", "exec", ns, pipefwd, topo, "--",
                             "--file-prefix=" + file_prefix],
                            stdout=log, stderr=subprocess.STDOUT)


def stop_pipefwd(proc, log_path):
    """SIGINT; True when pipefwd exits 0 with the accounting line exact."""
    proc.send_signal(2)
    try:
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    out = open(log_path).read()
    ok = rc == 0 and "unaccounted 0 (ok)" in out
    if not ok:
        print(out[-3000:])
    return ok
