#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd-ctl's errors: exit 2 for a bad command line, 1 for a refused
command, and the names it meant.

Against a running router (the stage and port names of conf/default.yaml):
a mistyped command is answered with the one meant (or two), never with the
list of every command; an unknown stage, port, ring or lcore is refused
naming the valid ones (of the right type: an l2fib for `macs`) and the
nearest; a stage of the wrong type says which stages would do; bad option
values and missing arguments exit 2; pipefwd's own refusals, a pipefwd that
is not running and an unknown telemetry command exit 1. Every expected name
is written here from the topology, not read from pipefwd.

usage: test_console_errors.py PIPEFWD PIPEFWD_CTL
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from pftest import dpdk_rundir, finish, stop_pipefwd, telemetry, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "console_errors_%d" % os.getpid()
FAILS = []

TOPO = """\
eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/empty.pcap", mac: "02:00:00:00:00:10", ipv4: 192.168.0.1/24 }}
  p1: {{ device: "net_pcap1,rx_pcap={tmp}/empty.pcap", mac: "02:00:00:00:00:11", ipv4: 10.1.0.254/16 }}
  p2: {{ device: "net_pcap2,rx_pcap={tmp}/empty.pcap" }}
  p3: {{ device: "net_pcap3,rx_pcap={tmp}/empty.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: acl }} }}
  acl: {{ type: acl, default: permit, rules: [deny proto tcp dport 23], next: lpm }}
  lpm:
    type: lpm
    nexthops:
      lab_gw: {{ port: p1, mac: "02:00:00:00:00:0b" }}
    routes:
      - {{ prefix: 10.1.0.0/16, via: lab_gw }}
    next: tx
  rx_l2: {{ type: rx, ports: [p2, p3], next: l2 }}
  l2: {{ type: l2fib, ports: [p2, p3], next: tx }}
  tx: {{ type: tx, ports: [p0, p1, p2, p3] }}
lcores:
  1: [rx, acl, lpm, tx]
  2: [rx_l2, l2]
"""

# (arguments, exit status, words stderr must hold)
USAGE = [
    (["stagse"], 2, ["unknown command 'stagse'", "did you mean 'stages'?"]),
    (["routs", "lpm"], 2, ["did you mean 'route' or 'routes'?"]),
    (["tarce", "3"], 2, ["did you mean 'trace'?"]),
    (["--json", "aclmatch", "acl"], 2, ["did you mean 'acl-match'?"]),
    (["xyzzy"], 2, ["unknown command 'xyzzy' (pipefwd-ctl --help lists them)"]),
    (["stages", "--interval", "-1"], 2, ["--interval"]),
    (["rebalance", "--window", "100"], 2, ["--window: want seconds in [0.5, 60]"]),
    (["trace"], 2, ["trace needs a number of packets"]),
    (["trace", "lots"], 2, ["'lots' is not a number of packets"]),
    (["acl-match", "acl", "1.1.1.1", "2.2.2.2", "tcp", "5"], 2, ["both ports"]),
    (["trace", "inject", "in=p0", "ipv5", "src=1.1.1.1"], 2, ["did you mean 'ipv4' or 'ipv6'?"]),
]
REFUSED = [
    (["stages", "lmp"], ["unknown stage 'lmp' (did you mean 'lpm'?)",
                         "stages: acl, l2, lpm, rx, rx_l2, tx"]),
    (["routes", "lmp"], ["unknown stage 'lmp' (did you mean 'lpm'?)", "lpm/lpm6 stages: lpm"]),
    (["macs", "lpm"], ["stage 'lpm' is of type lpm: macs works on l2fib stages (here: l2)"]),
    (["sessions", "l2"], ["stage 'l2' is of type l2fib", "acl stages (here: acl)"]),
    (["rule-add", "acx", "deny", "proto", "udp"], ["did you mean 'acl'?"]),
    (["macs", "l2", "--port", "p7"], ["unknown port 'p7'", "ports: p0, p1, p2, p3"]),
    (["ports", "p00"], ["unknown port 'p00'"]),
    (["lcores", "7"], ["unknown lcore '7'; lcores: 1, 2"]),
    (["rings", "rx->acx"], ["unknown ring 'rx->acx'"]),
    (["clear", "l3"], ["unknown stage or ring 'l3' (did you mean 'l2'?)"]),
    (["trace", "3", "--stage", "acx"], ["unknown stage 'acx' (did you mean 'acl'?)"]),
    (["neighbors"], ["unknown stage 'neigh'", "neigh stages: none"]),
    (["acl-match", "acl", "1.1.1.1", "2.2.2.2", "icmp", "--in", "p9"], ["unknown port 'p9'"]),
    (["route-add", "lpm", "10.9.0.0/16", "nosuchhop"], []),   # pipefwd's own refusal
    (["raw", "/pipefwd/nosuch"], []),
]


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def ctl(args, prefix=PREFIX):
    return subprocess.run([CTL, "--file-prefix", prefix, "--timeout", "20"] + args,
                          capture_output=True, text=True, timeout=90)


def expect(args, rc, words, prefix=PREFIX):
    r = ctl(args, prefix)
    print("$ pipefwd-ctl %s  -> %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()[:200]))
    check(r.returncode == rc, "%s: exit %d, want %d: %r" % (args, r.returncode, rc, r.stderr))
    check("Traceback" not in r.stderr, "%s: traceback %r" % (args, r.stderr))
    # A mistyped command is not answered with the list of every command.
    check("choose from" not in r.stderr and r.stderr.count("\n") <= 3,
          "%s: a long answer %r" % (args, r.stderr))
    for w in words:
        check(w in r.stderr, "%s: %r not in %r" % (args, w, r.stderr))


def main():
    tmp = tempfile.mkdtemp(prefix="pf_ctlerr_")
    proc = None
    try:
        # Usage errors need no pipefwd: nothing is asked.
        for args, rc, words in USAGE[:5]:
            expect(args, rc, words, prefix="nosuch_%d" % os.getpid())
        # prom --listen: a port that is no port, one in use, an address not served (issue 32
        # item 10: 127.0.0.1:99999 was a traceback, so were :http and a port in use).
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        for args, rc, words in (
                (["prom", "--listen", "127.0.0.1:99999"], 2, ["port must be a number in 0..65535"]),
                (["prom", "--listen", "127.0.0.1:http"], 2, ["port must be a number"]),
                (["prom", "--listen", "[::1]:65536"], 2, ["port must be a number"]),
                (["prom", "--listen", "127.0.0.1:%d" % busy.getsockname()[1]], 1,
                 ["cannot listen there: Address already in use"]),
                (["prom", "--listen", "192.0.2.1:9100"], 1, ["only loopback addresses"])):
            expect(args, rc, words, prefix="nosuch_%d" % os.getpid())
        busy.close()
        write_pcap(os.path.join(tmp, "empty.pcap"), [])
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(tmp=tmp))
        log = open(os.path.join(tmp, "pipefwd.log"), "w")
        proc = subprocess.Popen([PIPEFWD, "-q", topo, "--", "--file-prefix=" + PREFIX],
                                stdout=log, stderr=subprocess.STDOUT)
        sock = os.path.join(dpdk_rundir(PREFIX), "dpdk_telemetry.v2")
        end, up = time.monotonic() + 60, False
        while time.monotonic() < end and not up and proc.poll() is None:
            time.sleep(0.2)
            try:
                up = telemetry(sock, "/pipefwd/totals", timeout=5) is not None
            except (OSError, ValueError):
                pass
        if check(up, "pipefwd did not start"):
            for args, rc, words in USAGE:
                expect(args, rc, words)
            for args, words in REFUSED:
                expect(args, 1, words)
            expect(["totals"], 1, ["no such socket"], prefix="nosuch_%d" % os.getpid())
            r = ctl(["stages", "lpm"])
            check(r.returncode == 0 and "lpm" in r.stdout, "a good name: %d %r" % (
                r.returncode, r.stderr))
    except Exception as e:  # report, and keep the files for a look
        traceback.print_exc()
        FAILS.append("exception: %r" % e)
    finally:
        if proc is not None:
            rc = stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
            check(rc == 0, "pipefwd exited %d" % rc)
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
