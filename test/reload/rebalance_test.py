#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd-ctl rebalance: advice from live counters, applied through a reload.

    /usr/bin/python3 test/reload/rebalance_test.py [--pipefwd build/app/pipefwd]

Runs rx -> a -> b -> tx fused on lcore 1 with two spare lcores on looping
traffic. With a zero cross-lcore cost the advisor must propose spreading the
stages (the busiest lcore gets lighter); --apply must rewrite the lcores block
of the topology file, reload, and the running map must then match the file.
A second reload with a broken file must be refused and change nothing.
Asked again before applying, the advice must hold (the same proposal, on no
more lcores than CPUs); after applying, a new move only for a 10 % gain.
A stage named "b c" must survive the rewrite (YAML quoting), the file must
keep its mode and leave no temporary file, and --cross-cycles nan or inf
must be refused without touching the file.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import replaylib  # noqa: E402

CTL = os.path.join(ROOT, "scripts", "pipefwd-ctl")

TOPOLOGY = """eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,infinite_rx=1" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: a }}
  a:  {{ type: xconnect, pairs: {{ p0: p1 }}, next: "b c" }}
  "b c": {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, a, "b c", tx]
  2: []
  3: []
"""


def ctl(prefix, *args):
    p = subprocess.run(["/usr/bin/python3", CTL, "--file-prefix", prefix] + list(args),
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipefwd", default=os.path.join(ROOT, "build", "app", "pipefwd"))
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="rebalance-test-")
    prefix = f"rebal_{os.getpid()}"
    replaylib.write_pcap(f"{d}/in.pcap", [replaylib.udp4(sport=1000 + i) for i in range(256)])
    topo = f"{d}/topology.yaml"
    with open(topo, "w") as f:
        f.write(TOPOLOGY.format(d=d))
    proc = subprocess.Popen([args.pipefwd, "-q", "-d", "120", "-j", f"{d}/stats.json", topo, "--",
                             f"--file-prefix={prefix}"], stderr=subprocess.PIPE, text=True)
    errors = []
    try:
        time.sleep(2.0)
        rc, out = ctl(prefix, "--json", "rebalance", "--suggest", "--cross-cycles", "0")
        advice = json.loads(out) if rc == 0 else {}
        if rc != 0 or advice.get("moves", 0) == 0:
            errors.append(f"no move proposed: rc {rc}: {out}")
        elif advice["busiest_pct_after_x100"] >= advice["busiest_pct_before_x100"]:
            errors.append(f"proposal is not lighter: {advice}")
        # No flapping: asked again while the load stays, the same proposal
        # (held), on lcores that can each have a CPU of their own.
        for k in range(2):
            time.sleep(1.0)
            rc, out = ctl(prefix, "--json", "rebalance", "--suggest", "--cross-cycles", "0")
            again = json.loads(out) if rc == 0 else {}
            if again.get("proposed") != advice.get("proposed") or \
                    "advice given last" not in again.get("why", ""):
                errors.append(f"advice {k + 2} differs: {advice.get('proposed')} then {again}")
        used = [lc for lc, v in advice.get("proposed", {}).items() if v]
        if len(used) > os.cpu_count():
            errors.append(f"proposal on {used}: more lcores than CPUs")
        os.chmod(topo, 0o640)
        before = open(topo).read()
        for bad in ("nan", "inf", "-1"):
            rc, out = ctl(prefix, "rebalance", "--apply", "--cross-cycles", bad)
            if rc == 0 or open(topo).read() != before:
                errors.append(f"--cross-cycles {bad} not refused: rc {rc}: {out}")
        rc, out = ctl(prefix, "rebalance", "--apply", "--cross-cycles", "0")
        print(out)
        # Applied: a new move only for a real gain (10 % of the busiest lcore).
        time.sleep(2.5)
        rc2, out2 = ctl(prefix, "--json", "rebalance", "--suggest", "--cross-cycles", "0",
                        "--window", "2")
        after = json.loads(out2) if rc2 == 0 else {}
        if rc2 != 0 or (after.get("moves") and after["busiest_pct_after_x100"] >
                        0.9 * after["busiest_pct_before_x100"]):
            errors.append(f"advice after --apply: rc {rc2}: {out2}")
        if rc != 0 or "applied in" not in out:
            errors.append(f"--apply failed: rc {rc}: {out}")
        if os.stat(topo).st_mode & 0o777 != 0o640:
            errors.append(f"mode not kept: {oct(os.stat(topo).st_mode)}")
        if sorted(os.listdir(d)) != ["in.pcap", "topology.yaml"]:
            errors.append(f"files left beside the topology: {os.listdir(d)}")
        block = yaml.safe_load(open(topo))["lcores"]
        rc, out = ctl(prefix, "--json", "config")
        cfg = json.loads(out)
        running = {k.strip("lcore_"): v for k, v in cfg["lcore_map"].items()}
        if sorted(n for v in block.values() for n in v) != sorted(["rx", "a", "b c", "tx"]):
            errors.append(f"stage names in the rewritten file: {block}")
        for lc, names in block.items():
            if " ".join(names) != running.get(str(lc), ""):
                errors.append(f"lcore {lc}: file says {names}, running map {running}")
        if cfg["generation"] != 1:
            errors.append(f"generation {cfg['generation']} after one reload")
        # A broken file is refused and the map stays.
        with open(topo, "a") as f:
            f.write("rings: { default: { size: 1000 } }\n")
        rc, out = ctl(prefix, "reload")
        print(out)
        if rc == 0 or "refused" not in out or "power of two" not in out:
            errors.append(f"broken reload not refused: rc {rc}: {out}")
        rc, out = ctl(prefix, "--json", "config")
        cfg2 = json.loads(out)
        if cfg2["lcore_map"] != cfg["lcore_map"] or cfg2["reload_failures"] != 1:
            errors.append(f"refused reload changed something: {cfg2['lcore_map']}")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    st = json.load(open(f"{d}/stats.json"))
    if proc.returncode != 0 or st["totals"]["unaccounted"] != 0:
        errors.append(f"exit {proc.returncode}, totals {st['totals']}")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        shutil.rmtree(d, ignore_errors=True)
        print("rebalance test: advice applied through reload, bad reload refused, totals exact")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
