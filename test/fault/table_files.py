#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: table files that are not tables (issue 16, defects 3, 10, 11).

    /usr/bin/python3 test/fault/table_files.py [--pipefwd build/app/pipefwd]

--check, each in well under its 10 s limit, exit 78 with file:line:col:
  a FIFO as rules_file (a plain open would block forever);
  a rules file another writer keeps appending to ("changed while it was read");
  a routes file that is not a table and not world-readable: the error gives
  the position, never the content (a secret token must not be echoed); the
  same for an acl rules file, an lpm6 routes file and an l2fib static file;
  -d nan and -i junk are refused (exit 64, EX_USAGE).
Live: pipefwd forwards rx -> acl (rules_file) -> xc -> tx; the rules file is
replaced by a FIFO and SIGHUP sent: the reload is refused, the telemetry
socket keeps answering; a second instance on the same --file-prefix exits 78
naming the pid that holds it; SIGTERM ends the run at once, nothing
unaccounted.
Every file is in this test's own temp dir.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from faultlib import (Pipefwd, Scratch, args_parser, check_common, finish, flows_input,  # noqa: E402
                      load_stats, signal, sigterm_within)
from pftest import telemetry  # noqa: E402

EAL = '[--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]'
TOPO = """eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,infinite_rx=1" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: acl }}
  acl: {{ type: acl, default: deny, rules_file: {rules}, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, acl, xc, tx]
"""
LPM = """ports:
  p0: {{ device: net_null0, mac: "02:00:00:00:00:01", ipv4: 10.0.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: lpm }} }}
  lpm: {{ type: lpm, nexthops: {{ h: {{ port: p0, mac: "02:00:00:00:00:02" }} }},
         routes_file: {routes}, next: tx }}
  tx: {{ type: tx, ports: [p0] }}
lcores:
  1: [rx, lpm, tx]
"""
# The same secret file as each other kind of table file.
TABLES = """ports:
  p0: {{ device: net_null0, mac: "02:00:00:00:00:01", ipv4: 10.0.0.1/24, ipv6: "2001:db8::1/64" }}
  p1: {{ device: net_null1 }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: acl, ipv6: lpm6, other: l2 }} }}
  acl: {{ type: acl, rules_file: {f}, next: tx }}
  lpm6: {{ type: lpm6, nexthops: {{ h: {{ port: p0, mac: "02:00:00:00:00:02" }} }},
          routes_file: {f}, next: tx }}
  l2: {{ type: l2fib, ports: [p0, p1], static: {f}, next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, acl, lpm6, l2, tx]
"""


def check_run(pipefwd, topo, errors, what, want_rc=78, limit=10.0, args=()):
    t0 = time.monotonic()
    try:
        p = subprocess.run([pipefwd, *args, "--check", topo], capture_output=True, text=True,
                           timeout=limit)
    except subprocess.TimeoutExpired:
        errors.append(f"{what}: --check still running after {limit} s")
        return ""
    if p.returncode != want_rc:
        errors.append(f"{what}: exit {p.returncode}, want {want_rc}: {p.stderr[-800:]}")
    print(f"{what}: {time.monotonic() - t0:.2f} s: {p.stderr.strip()[:300]}")
    return p.stderr


def main():
    ap = args_parser(__doc__)
    args = ap.parse_args()
    sc = Scratch("table-files")
    errors = []
    flows_input(sc.path("in.pcap"), 256)

    # A FIFO as the rules file.
    fifo = sc.path("fifo.rules")
    os.mkfifo(fifo)
    topo = sc.path("fifo.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL, d=sc.dir, rules=fifo))
    err = check_run(args.pipefwd, topo, errors, "FIFO rules_file")
    if not re.search(re.escape(topo) + r":\d+:\d+: error: stages\.acl\.rules_file: '" +
                     re.escape(fifo) + "' is a FIFO", err):
        errors.append(f"FIFO rules_file: no located 'is a FIFO' error: {err[-500:]}")

    # A rules file that keeps changing while it is read: a writer process appends
    # all the time (a big file: the parse takes a while). pipefwd reads what the
    # file held when opened (so the read ends) and then sees it changed. On a
    # busy machine the writer may get no CPU while one --check reads: that run
    # rightly passes, so up to five runs, and one must refuse.
    growing = sc.path("growing.rules")
    with open(growing, "w") as f:
        f.write("permit proto udp\n" * 20000)
    writer = subprocess.Popen(["/usr/bin/python3", "-c",
                               "import sys\nf = open(sys.argv[1], 'a')\n"
                               "while True:\n    f.write('deny src 10.0.0.1\\n')\n    f.flush()\n",
                               growing])
    size0 = os.path.getsize(growing)
    while os.path.getsize(growing) == size0 and writer.poll() is None:
        time.sleep(0.01)
    topo = sc.path("growing.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL, d=sc.dir, rules=growing))
    refused = False
    for attempt in range(5):
        t0 = time.monotonic()
        try:
            p = subprocess.run([args.pipefwd, "--check", topo], capture_output=True, text=True,
                               timeout=10)
        except subprocess.TimeoutExpired:
            errors.append("growing rules file: --check still running after 10 s")
            break
        print(f"growing rules file, run {attempt}: exit {p.returncode} in "
              f"{time.monotonic() - t0:.2f} s: {p.stderr.strip()[:200]}")
        if p.returncode == 78:
            if f"{growing}: error: changed while it was read" not in p.stderr:
                errors.append(f"growing rules file: not refused as changed while read: "
                              f"{p.stderr[-500:]}")
            refused = True
            break
        if p.returncode != 0:
            errors.append(f"growing rules file: exit {p.returncode}: {p.stderr[-500:]}")
            break
    writer.kill()
    writer.wait()
    if not refused and not errors:
        errors.append("growing rules file: five runs read it while it grew, none refused it")

    # Not a table, not world-readable: position only, no content.
    secret = sc.path("secret")
    with open(secret, "w") as f:
        f.write("SECRETTOKEN-4711 do-not-log\nSECRETTOKEN-0815\n")
    os.chmod(secret, 0o600)
    topo = sc.path("secret.yaml")
    with open(topo, "w") as f:
        f.write(LPM.format(routes=secret))
    err = check_run(args.pipefwd, topo, errors, "secret routes file")
    if "SECRETTOKEN" in err:
        errors.append(f"secret routes file: content echoed: {err[-500:]}")
    if not re.search(re.escape(secret) + r":1:\d+: error: ", err):
        errors.append(f"secret routes file: no position for line 1: {err[-500:]}")
    topo = sc.path("secret-tables.yaml")
    with open(topo, "w") as f:
        f.write(TABLES.format(f=secret))
    err = check_run(args.pipefwd, topo, errors, "secret rules, lpm6 routes and static files")
    if "SECRETTOKEN" in err:
        errors.append(f"secret table files: content echoed: {err[-500:]}")
    if len(re.findall(re.escape(secret) + r":1:\d+: error: ", err)) != 3:
        errors.append(f"secret table files: want 3 errors at line 1 of {secret}: {err[-800:]}")

    # Numeric options: numbers only.
    for opt, val in (("-d", "nan"), ("-d", "inf"), ("-i", "12abc"), ("-d", "-3")):
        p = subprocess.run([args.pipefwd, opt, val, topo], capture_output=True, text=True,
                           timeout=10)
        if p.returncode != 64 or "not a number" not in p.stderr:
            errors.append(f"{opt} {val}: exit {p.returncode}: {p.stderr[-300:]}")

    # Live: a reload that would read a FIFO is refused; nothing hangs.
    rules = sc.path("acl.rules")
    with open(rules, "w") as f:
        f.write("permit proto udp\n")
    topo = sc.path("live.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL, d=sc.dir, rules=rules))
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, args=["-d", "120"], prefix="tablefiles")
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start: " + pf.stderr()[-1500:])
    else:
        # A second instance on the same --file-prefix says so (not "EAL init failed: Success").
        p = subprocess.run([args.pipefwd, "-q", "-d", "1", topo, "--",
                            f"--file-prefix={pf.prefix}"], capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 78 or f"--file-prefix={pf.prefix} is in use by another DPDK " \
                f"process (pid {pf.proc.pid})" not in p.stderr:
            errors.append(f"second instance on a busy prefix: exit {p.returncode}: "
                          f"{p.stderr[-500:]}")
        os.unlink(rules)
        os.mkfifo(rules)
        start = len(pf.log)
        pf.signal(signal.SIGHUP)
        line = pf.wait_log("reload refused", timeout=15, start=start)
        if line is None or "is a FIFO" not in "".join(pf.log[start:]):
            errors.append("reload with a FIFO rules file not refused: " +
                          "".join(pf.log[start:])[-1000:])
        try:
            cfg = telemetry(f"/var/run/dpdk/{pf.prefix}/dpdk_telemetry.v2", "/pipefwd/config")
            if cfg.get("reload_failures") != 1 or cfg.get("generation") != 0:
                errors.append(f"/pipefwd/config after the refusal: {cfg}")
        except (OSError, ValueError) as e:
            errors.append(f"telemetry does not answer after the refused reload: {e}")
        sigterm_within(pf, errors)
        st = load_stats(stats, errors)
        if st is not None:
            check_common(st, errors)
            if st["stages"]["acl"]["counters"].get("permit", 0) == 0:
                errors.append("the running ACL forwarded nothing")
    finish("table files", sc, errors, "FIFO, growing and secret files refused; reload safe")


if __name__ == "__main__":
    main()
