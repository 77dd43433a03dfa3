#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Learnt routes through pipefwd between real hosts (lpm's learnt: table).

    /usr/bin/python3 test/netns/learnt_routes.py --pipefwd build/app/pipefwd

pipefwd runs in a namespace of its own (PFX+"w") with three net_tap ports
bridged to veths there: host A (10.1.0.2) on p0, gateways G1 (10.2.0.2) on
p1 and G2 (10.3.0.2) on p2, each gateway holding 10.50.0.1 and 10.60.0.1 on
its loopback and routing back to pipefwd. Routes are learnt through the
stats socket (/pipefwd/learn), as a routing daemon's would be:
  - 10.50.0.0/16 via G1: A pings 10.50.0.1 (pipefwd resolves G1 by ARP and
    then forwards on the fast path: lpm's ip4_to_neigh stops moving), the
    route shows in `routes` as learnt, installed, with G1's MAC;
  - a replace to G2 moves the traffic (G2 answers), a delete gives no route;
  - 10.60.0.0/16 via G1 and G2 (ECMP): 64 UDP flows from A, each flow
    received by one gateway only, both gateways getting flows; G2's port
    goes down (its tap in the wire namespace): every flow reaches G1, and the
    flows G1 had stay there (only G2's moved);
  - pipefwd exits 0 with the accounting line exact.
Needs root, ip, ping, ethtool: skipped (exit 77) without.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

PFX = os.environ.get("PF_NETNS_PREFIX", "pfl%04x" % (os.getpid() & 0xffff))
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-learnt")
NS_W = PFX + "w"
HOSTS = {  # name: (port, host address, router address, host MAC)
    "a": ("p0", "10.1.0.2", "10.1.0.1", "02:00:00:0a:00:02"),
    "g1": ("p1", "10.2.0.2", "10.2.0.1", "02:00:00:0b:00:02"),
    "g2": ("p2", "10.3.0.2", "10.3.0.1", "02:00:00:0c:00:02"),
}
PORT_MAC = {"p0": "02:00:00:00:00:10", "p1": "02:00:00:00:00:11", "p2": "02:00:00:00:00:12"}
N_FLOWS = 64

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_tap0,iface={t0}", mac: "{m0}", ipv4: 10.1.0.1/24 }}
  p1: {{ device: "net_tap1,iface={t1}", mac: "{m1}", ipv4: 10.2.0.1/24 }}
  p2: {{ device: "net_tap2,iface={t2}", mac: "{m2}", ipv4: 10.3.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [p0, p1, p2], next: {{ ipv4: lpm, arp: neigh }} }}
  lpm: {{ type: lpm, learnt: {{ routes: 1000, nexthops: 64, groups: 8, tbl8: 16 }},
         next: {{ out: tx, neigh: neigh }} }}
  neigh: {{ type: neigh, next: {{ out: tx }} }}
  tx: {{ type: tx, ports: [p0, p1, p2] }}
lcores:
  1: [rx, lpm, neigh, tx]
"""

UDP_SINK = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.60.0.1", 7000)); s.settimeout(0.5)
seen = set(); end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        d, a = s.recvfrom(100)
        seen.add(a[1])
    except socket.timeout:
        pass
open(sys.argv[1], "w").write(" ".join(str(p) for p in sorted(seen)))
"""

UDP_SEND = """
import socket, sys
for i in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.1.0.2", 20000 + i))
    for k in range(3):
        s.sendto(b"x" * 32, ("10.60.0.1", 7000))
    s.close()
"""

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def sh(*cmd, ns=None, ok=True, timeout=30):
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if ok and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(full), r.stderr.strip()))
    return r


def wait_for(pred, seconds, step=0.2):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


class Ctl:
    def __init__(self, root):
        self.path = os.path.join(root, "scripts", "pipefwd-ctl")

    def json(self, *args):
        r = subprocess.run([sys.executable, self.path, "--file-prefix", FILE_PREFIX, "--json"] +
                           list(args), capture_output=True, text=True, timeout=20)
        return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None

    def learn(self, params):
        return self.json("raw", "/pipefwd/learn," + params)

    def lpm_ctr(self, name):
        j = self.json("stages") or {}
        for st in j.values():
            if isinstance(st, dict) and st.get("name") == "lpm":
                return dict(st.get("drops", {}), **st.get("counters", {})).get(name, 0)
        return 0


def flows_test(tmp, tag, seconds=6):
    outs = {}
    procs = []
    for g in ("g1", "g2"):
        outs[g] = os.path.join(tmp, "%s.%s" % (tag, g))
        procs.append(subprocess.Popen(["ip", "netns", "exec", PFX + g, sys.executable, "-c",
                                       UDP_SINK, outs[g], str(seconds)]))
    time.sleep(0.8)
    sh(sys.executable, "-c", UDP_SEND, str(N_FLOWS), ns=PFX + "a")
    for p in procs:
        p.wait(timeout=seconds + 10)
    got = {}
    for g in ("g1", "g2"):
        txt = open(outs[g]).read().split()
        got[g] = {int(x) for x in txt}
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", required=True)
    a = ap.parse_args()
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "ping", "ethtool")):
        print("skipped: needs root, ip, ping and ethtool")
        return 77
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ctl = Ctl(root)
    tmp = tempfile.mkdtemp(prefix="pf_learnt_")
    taps = {"p0": PFX + "t0", "p1": PFX + "t1", "p2": PFX + "t2"}
    proc = None
    try:
        sh("ip", "netns", "add", NS_W)
        for name, (port, addr, rtr, mac) in HOSTS.items():
            ns = PFX + name
            sh("ip", "netns", "add", ns)
            br, v0, v1 = PFX + "b" + port[1], PFX + "v" + port[1], PFX + "u" + port[1]
            sh("ip", "link", "add", v0, "type", "veth", "peer", "name", v1, ns=NS_W)
            sh("ip", "link", "set", v1, "netns", ns, ns=NS_W)
            sh("ip", "link", "add", br, "type", "bridge", ns=NS_W)
            sh("ip", "link", "set", v0, "master", br, "up", ns=NS_W)
            sh("ip", "link", "set", br, "up", ns=NS_W)
            sh("ethtool", "-K", v1, "tx", "off", ns=ns)
            sh("ip", "link", "set", v1, "address", mac, ns=ns)
            sh("ip", "addr", "add", addr + "/24", "dev", v1, ns=ns)
            sh("ip", "link", "set", v1, "up", ns=ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
            sh("ip", "route", "add", "default", "via", rtr, ns=ns)
            if name != "a":
                sh("ip", "addr", "add", "10.50.0.1/32", "dev", "lo", ns=ns)
                sh("ip", "addr", "add", "10.60.0.1/32", "dev", "lo", ns=ns)
                sh("sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", ns=ns)
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(t0=taps["p0"], t1=taps["p1"], t2=taps["p2"], m0=PORT_MAC["p0"],
                                m1=PORT_MAC["p1"], m2=PORT_MAC["p2"]))
        log = open(os.path.join(tmp, "pipefwd.log"), "w")
        proc = subprocess.Popen(["ip", "netns", "exec", NS_W, a.pipefwd, topo, "--",
                                 "--file-prefix=" + FILE_PREFIX],
                                stdout=log, stderr=subprocess.STDOUT)
        for i, port in enumerate(("p0", "p1", "p2")):
            ok = wait_for(lambda: sh("ip", "link", "show", taps[port], ns=NS_W,
                                     ok=False).returncode == 0, 20)
            if not ok:
                log.flush()
                print(open(os.path.join(tmp, "pipefwd.log")).read()[-3000:])
                check(False, "pipefwd made its taps")
                return 1
            sh("ip", "link", "set", taps[port], "address", "02:00:00:ff:00:0%d" % i, ns=NS_W)
            sh("ip", "link", "set", taps[port], "master", PFX + "b" + port[1], "up", ns=NS_W)
        check(wait_for(lambda: ctl.json("totals") is not None, 20), "the stats socket answers")
        # By address: resolved by ARP, then on the fast path.
        r = ctl.learn("add,0,10.50.0.0/16,10.2.0.2@p1")
        check(r is not None and r.get("added") == 1, "learn 10.50.0.0/16 via G1: %s" % r)
        ping = sh("ping", "-c", "5", "-i", "0.2", "-w", "10", "10.50.0.1", ns=PFX + "a", ok=False)
        check(ping.returncode == 0, "A pings 10.50.0.1 behind G1")
        before = ctl.lpm_ctr("ip4_to_neigh")
        ping = sh("ping", "-c", "10", "-i", "0.1", "-w", "10", "10.50.0.1", ns=PFX + "a",
                  ok=False)
        after = ctl.lpm_ctr("ip4_to_neigh")
        check(ping.returncode == 0 and after == before,
              "then forwarded without the neigh stage (ip4_to_neigh %d -> %d)" % (before, after))
        rows = (ctl.json("routes", "lpm", "--all") or {}).get("rows", [])
        mine = [x for x in rows if x.get("prefix") == "10.50.0.0/16"]
        check(len(mine) == 1 and mine[0].get("source") == "learnt:0" and
              mine[0].get("state") == "installed" and mine[0].get("mac") == HOSTS["g1"][3],
              "routes shows it learnt, installed, at G1's MAC: %s" % mine)
        # A replace moves it; a delete takes it away.
        r = ctl.learn("add,0,10.50.0.0/16,10.3.0.2@p2")
        check(r is not None and r.get("replaced") == 1, "replace via G2: %s" % r)
        sh("ip", "addr", "del", "10.50.0.1/32", "dev", "lo", ns=PFX + "g1")
        ping = sh("ping", "-c", "3", "-i", "0.2", "-w", "10", "10.50.0.1", ns=PFX + "a", ok=False)
        check(ping.returncode == 0, "A reaches 10.50.0.1 behind G2 now (G1 no longer has it)")
        r = ctl.learn("del,0,10.50.0.0/16")
        ping = sh("ping", "-c", "2", "-i", "0.2", "-W", "1", "10.50.0.1", ns=PFX + "a", ok=False)
        check(r is not None and r.get("deleted") == 1 and ping.returncode != 0,
              "deleted: no route to 10.50.0.1")
        # ECMP over G1 and G2.
        r = ctl.learn("add,0,10.60.0.0/16,10.2.0.2@p1,10.3.0.2@p2")
        check(r is not None and r.get("added") == 1, "learn 10.60.0.0/16 via G1 and G2: %s" % r)
        got = flows_test(tmp, "both")
        every = got["g1"] | got["g2"]
        check(len(every) == N_FLOWS and not (got["g1"] & got["g2"]),
              "%d flows: each at one gateway (%d at G1, %d at G2, %d at both)" %
              (len(every), len(got["g1"]), len(got["g2"]), len(got["g1"] & got["g2"])))
        check(len(got["g1"]) >= N_FLOWS // 4 and len(got["g2"]) >= N_FLOWS // 4,
              "both gateways carry flows")
        sh("ip", "link", "set", taps["p2"], "down", ns=NS_W)
        time.sleep(0.5)
        down = flows_test(tmp, "down")
        check(len(down["g1"]) == N_FLOWS and not down["g2"] and got["g1"] <= down["g1"],
              "G2's port down: every flow at G1 (%d), G1's flows stayed" % len(down["g1"]))
        sh("ip", "link", "set", taps["p2"], "up", ns=NS_W)
        proc.send_signal(2)
        rc = proc.wait(timeout=30)
        proc = None
        out = open(os.path.join(tmp, "pipefwd.log")).read()
        check(rc == 0 and "unaccounted 0 (ok)" in out, "pipefwd exits 0, accounting exact")
        if rc != 0 or failures:
            print(out[-3000:])
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        for name in list(HOSTS) + ["w"]:
            subprocess.run(["ip", "netns", "del", PFX + name], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
