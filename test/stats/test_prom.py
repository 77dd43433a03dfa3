#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Prometheus exposition, however it is produced, passes `promtool check
metrics` (Prometheus' own parser and linter; issue 33 item 6).

pipefwd runs a router (rx -> acl -> lpm -> tx, over a ring between two
lcores) and a bridge (rx2 -> l2 -> tx2) from looping pcaps, so the
exposition has every kind of family: counters, gauges, ring histograms,
drops by reason, edges, stage gauges, ports. Its topology sits in a
directory whose name holds a quote, a backslash and a space, which the
pipefwd_info label must escape. Checked, each with promtool:
 - `pipefwd-ctl prom` (stdout);
 - `pipefwd-ctl prom --listen 127.0.0.1:0`: GET /metrics is 200 with the
   text format's content type; after pipefwd stops, 503 and a comment.
Each family has one HELP and one TYPE; every histogram ends in +Inf and
_count.

usage: test_prom.py PIPEFWD PIPEFWD_CTL
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import dpdk_rundir, finish, ipv4_udp, stop_pipefwd, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PREFIX = "cprom_%d" % os.getpid()
FAILS = []
TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  b0: {{ device: "net_pcap0,rx_pcap={tmp}/l3.pcap,infinite_rx=1", mac: "02:00:00:00:00:10",
        ipv4: 192.168.0.1/24 }}
  b1: {{ device: "net_null0", mac: "02:00:00:00:00:11", ipv4: 172.17.0.1/24 }}
  a0: {{ device: "net_pcap1,rx_pcap={tmp}/l2.pcap,infinite_rx=1" }}
  a1: {{ device: "net_null1" }}
stages:
  rx: {{ type: rx, ports: [b0], next: {{ ipv4: acl }} }}
  acl: {{ type: acl, rules: ["permit proto udp dport 0-1000"], default: deny, next: lpm }}
  lpm:
    type: lpm
    nexthops:
      n1: {{ port: b1, mac: "02:00:00:00:01:01" }}
    routes:
      - {{ prefix: 10.60.0.0/16, via: n1 }}
    next: tx
  tx: {{ type: tx, ports: [b0, b1] }}
  rx2: {{ type: rx, ports: [a0], next: {{ ipv4: l2 }} }}
  l2: {{ type: l2fib, ports: [a0, a1], next: tx2 }}
  tx2: {{ type: tx, ports: [a0, a1] }}
lcores:
  1: [rx, acl, rx2, l2, tx2]
  2: [lpm, tx]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def promtool():
    path = shutil.which("promtool") or "/usr/bin/promtool"
    if not os.access(path, os.X_OK):
        print("promtool is missing: scripts/deps.sh installs it (Debian's prometheus)")
        sys.exit(1)
    return path


def promtool_ok(tool, text, what):
    r = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True, text=True,
                       timeout=60)
    return check(r.returncode == 0, "promtool check metrics on %s: rc %d %s%s" % (
        what, r.returncode, r.stdout, r.stderr))


def families(text, what):
    """Each family has one HELP and one TYPE; histograms are whole."""
    helps = re.findall(r"^# HELP (\S+) ", text, re.M)
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    check(len(helps) == len(set(helps)) == len(types),
          "%s: HELP %d (unique %d), TYPE %d" % (what, len(helps), len(set(helps)), len(types)))
    for name, kind in types.items():
        if kind == "histogram":
            check(re.search(r'^%s_bucket\{[^}]*le="\+Inf"\} \d+$' % name, text, re.M) and
                  re.search(r"^%s_count\{" % name, text, re.M),
                  "%s: histogram %s without +Inf or _count" % (what, name))
    return types


def main():
    tool = promtool()
    tmp = tempfile.mkdtemp(prefix="pf_prom_")
    d = os.path.join(tmp, 'lab "one" \\ two')
    os.makedirs(d)
    eth = bytes.fromhex("02000000001002000000aaaa0800")
    write_pcap(os.path.join(tmp, "l3.pcap"),
               [ipv4_udp(eth, [192, 168, 0, 7], [10, 60, 0, i % 200 + 1], i, 9, 53 + i % 2000,
                         bytes(18)) for i in range(256)])
    write_pcap(os.path.join(tmp, "l2.pcap"),
               [ipv4_udp(bytes.fromhex("0200000000bb0200000000%02x0800" % (i % 64)),
                         [10, 9, 0, 1], [10, 9, 0, 2], i, 1, 2, bytes(18)) for i in range(256)])
    topo = os.path.join(d, "topo.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(tmp=tmp))
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    proc = subprocess.Popen([PIPEFWD, "-q", topo, "--", "--file-prefix=" + PREFIX], stdout=log,
                            stderr=subprocess.STDOUT)
    ctl = [CTL, "--file-prefix", PREFIX, "--timeout", "20"]
    srv = None
    try:
        end = time.monotonic() + 60
        text = ""
        while time.monotonic() < end and proc.poll() is None:
            r = subprocess.run(ctl + ["prom"], capture_output=True, text=True, timeout=60)
            text = r.stdout
            if r.returncode == 0 and re.search(r'^pipefwd_ring_enqueued_packets_total\{ring='
                                               r'"acl->lpm"\} [1-9]', text, re.M):
                break
            time.sleep(0.3)
        check("pipefwd_ring_occupancy_entries_bucket" in text and
              'pipefwd_stage_dropped_packets_total{stage="acl",reason="acl_deny"}' in text and
              "pipefwd_stage_value" in text and "pipefwd_port_rx_packets_total" in text,
              "prom: families missing:\n%s" % text[:3000])
        want = topo.replace("\\", "\\\\").replace('"', '\\"')
        check('topology="%s"' % want in text, "pipefwd_info: the path is not escaped: %s" %
              [l for l in text.splitlines() if l.startswith("pipefwd_info")])
        promtool_ok(tool, text, "pipefwd-ctl prom")
        families(text, "pipefwd-ctl prom")

        srv = subprocess.Popen(ctl + ["prom", "--listen", "127.0.0.1:0", "--max-requests", "2"],
                               stderr=subprocess.PIPE, text=True)
        m = re.search(r":(\d+)/metrics", srv.stderr.readline())
        if check(m is not None, "prom --listen said nothing"):
            url = "http://127.0.0.1:%s/metrics" % m.group(1)
            with urllib.request.urlopen(url, timeout=20) as resp:
                body = resp.read().decode()
                ctype = resp.headers.get("Content-Type", "")
            check(ctype.startswith("text/plain; version=0.0.4"), "content type %r" % ctype)
            promtool_ok(tool, body, "GET /metrics")
            families(body, "GET /metrics")
            rc = stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
            check(rc == 0, "pipefwd exit %d" % rc)
            try:
                urllib.request.urlopen(url, timeout=20)
                check(False, "GET /metrics with pipefwd gone: not 503")
            except urllib.error.HTTPError as e:
                body = e.read().decode()
                check(e.code == 503 and body.startswith("# pipefwd unavailable:"),
                      "pipefwd gone: %d %r" % (e.code, body))
            srv.wait(20)
    finally:
        if srv is not None and srv.poll() is None:
            srv.kill()
            srv.wait()
        if proc.poll() is None:
            stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
    if not FAILS:
        print("ok")
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
