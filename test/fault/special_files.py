#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: a FIFO or a device as the topology file or as a pcap port's file (issue 32, defect 3).

    /usr/bin/python3 test/fault/special_files.py [--pipefwd build/app/pipefwd]

--check, each within 10 s, exit 78: the topology file a FIFO (a plain open
blocked forever) or a character device; an rx_pcap that is a FIFO, a
character device (/dev/zero) or a regular file without a pcap header; a
tx_pcap that is a FIFO or a character device (/dev/null): each error at the
port's device string (file:line:col). Started instead of checked, the FIFO
tx_pcap (libpcap opened it for writing and blocked) also exits 78 at once.
Live: pipefwd runs the lpm topology; its file is replaced by a FIFO; SIGHUP,
/pipefwd/reload and /pipefwd/change are each refused with "is a FIFO" while
the telemetry socket keeps answering; the first SIGTERM ends the run within
10 s, nothing unaccounted.
Every file but /dev/zero and /dev/null (only opened, never written) is in this
test's own temp dir.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from faultlib import (Pipefwd, Scratch, args_parser, check_common, finish, load_stats,  # noqa: E402
                      sigterm_within, signal, write_pcap)
from pftest import telemetry  # noqa: E402

EAL = '[--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]'
PCAP = """eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={rx},tx_pcap={tx}" }}
  p1: {{ device: net_null0 }}
stages:
  rx: {{ type: rx, ports: [p0], next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, xc, tx]
"""
LPM = """eal: {eal}
ports:
  p0: {{ device: net_null0, mac: "02:00:00:00:00:01", ipv4: 10.0.0.1/24 }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: lpm }} }}
  lpm: {{ type: lpm, nexthops: {{ h: {{ port: p0, mac: "02:00:00:00:00:02" }} }},
         routes: [{{ prefix: 10.1.0.0/16, via: h }}], next: tx }}
  tx: {{ type: tx, ports: [p0] }}
lcores:
  1: [rx, lpm, tx]
"""


def check_run(pipefwd, topo, errors, what, want, limit=10.0):
    """--check @topo: exit 78 within @limit s, stderr matching @want."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([pipefwd, "--check", topo], capture_output=True, text=True,
                           timeout=limit)
    except subprocess.TimeoutExpired:
        errors.append(f"{what}: --check still running after {limit} s")
        return
    if p.returncode != 78:
        errors.append(f"{what}: exit {p.returncode}, want 78: {p.stderr[-600:]}")
    if not re.search(want, p.stderr):
        errors.append(f"{what}: stderr lacks /{want}/: {p.stderr[-600:]}")
    print(f"{what}: {time.monotonic() - t0:.2f} s: {p.stderr.strip()[:200]}")


def main():
    args = args_parser(__doc__).parse_args()
    args.pipefwd = os.path.abspath(args.pipefwd)
    sc = Scratch("special-files")
    errors = []
    good = sc.path("in.pcap")
    write_pcap(good, [])
    fifo = sc.path("fifo")
    os.mkfifo(fifo)
    notpcap = sc.path("notpcap.pcap")
    with open(notpcap, "w") as f:
        f.write("this is not a capture\n")

    # The topology itself.
    check_run(args.pipefwd, fifo, errors, "FIFO topology", re.escape(fifo) + r": error: is a FIFO")
    check_run(args.pipefwd, "/dev/zero", errors, "/dev/zero topology",
              r"/dev/zero: error: is a character device")

    # pcap ports: rx_pcap and tx_pcap that are not files pcap can use.
    cases = [
        ("rx_pcap FIFO", fifo, sc.path("out.pcap"), "rx_pcap '" + re.escape(fifo) + "' is a FIFO"),
        ("rx_pcap /dev/zero", "/dev/zero", sc.path("out.pcap"),
         "rx_pcap '/dev/zero' is a character device"),
        ("rx_pcap not a pcap", notpcap, sc.path("out.pcap"),
         "rx_pcap '" + re.escape(notpcap) + "' is not a pcap file"),
        ("tx_pcap FIFO", good, fifo, "tx_pcap '" + re.escape(fifo) + "' is a FIFO"),
        ("tx_pcap /dev/null", good, "/dev/null", "tx_pcap '/dev/null' is a character device"),
    ]
    for what, rx, tx, want in cases:
        topo = sc.path(what.replace(" ", "_").replace("/", "") + ".yaml")
        with open(topo, "w") as f:
            f.write(PCAP.format(eal=EAL, rx=rx, tx=tx))
        check_run(args.pipefwd, topo, errors, what, re.escape(topo) + r":3:17: error: ports\.p0: " +
                  want)
    # Started, not checked: the FIFO tx_pcap is refused before EAL opens it.
    topo = sc.path("tx_pcap_FIFO.yaml")
    p = subprocess.Popen([args.pipefwd, "-q", "-d", "1", topo, "--",
                          f"--file-prefix=robust_special_{os.getpid()}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = p.communicate(timeout=20)
        if p.returncode != 78:
            errors.append(f"start with a FIFO tx_pcap: exit {p.returncode}: {err[-600:]}")
    except subprocess.TimeoutExpired:
        errors.append("start with a FIFO tx_pcap: still running after 20 s (blocked)")
        p.kill()
        p.communicate()
        subprocess.run(["rm", "-rf", f"/var/run/dpdk/robust_special_{os.getpid()}"])

    # Live: the running topology's file replaced by a FIFO.
    topo = sc.path("live.yaml")
    with open(topo, "w") as f:
        f.write(LPM.format(eal=EAL))
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, args=["-d", "120"], prefix="special")
    sock = f"/var/run/dpdk/{pf.prefix}/dpdk_telemetry.v2"
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start: " + pf.stderr()[-1500:])
    else:
        os.unlink(topo)
        os.mkfifo(topo)
        start = len(pf.log)
        pf.signal(signal.SIGHUP)
        if pf.wait_log("reload refused", timeout=15, start=start) is None or \
                "is a FIFO" not in "".join(pf.log[start:]):
            errors.append("SIGHUP with a FIFO topology not refused: " +
                          "".join(pf.log[start:])[-1000:])
        # /pipefwd/reload answers at once and asks the main thread to reload.
        start = len(pf.log)
        try:
            r = telemetry(sock, "/pipefwd/reload", timeout=10)
            if r.get("requested") != 1:
                errors.append(f"/pipefwd/reload: {r}")
            if pf.wait_log("reload refused", timeout=15, start=start) is None or \
                    "is a FIFO" not in "".join(pf.log[start:]):
                errors.append("/pipefwd/reload with a FIFO topology not refused: " +
                              "".join(pf.log[start:])[-1000:])
        except (OSError, ValueError) as e:
            errors.append(f"/pipefwd/reload with a FIFO topology: no answer: {e}")
        # /pipefwd/change reads the topology in the telemetry thread.
        try:
            r = telemetry(sock, "/pipefwd/change,add,lpm,routes,10.9.0.0/16 h", timeout=10)
            if "is a FIFO" not in str(r):
                errors.append(f"/pipefwd/change with a FIFO topology: {r}")
        except (OSError, ValueError) as e:
            errors.append(f"/pipefwd/change with a FIFO topology: no answer: {e}")
        try:
            cfg = telemetry(sock, "/pipefwd/config", timeout=10)
            if cfg.get("generation") != 0 or cfg.get("reload_failures") != 2:
                errors.append(f"/pipefwd/config after the refusals: {cfg}")
        except (OSError, ValueError) as e:
            errors.append(f"telemetry does not answer after the refusals: {e}")
    sigterm_within(pf, errors)     # the first one
    st = load_stats(stats, errors)
    if st is not None:
        check_common(st, errors)
    finish("special files", sc, errors, "FIFO and device topology and pcap files refused; "
           "reload, change and SIGTERM never blocked")


if __name__ == "__main__":
    main()
