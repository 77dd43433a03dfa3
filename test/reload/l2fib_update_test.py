#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Change l2fib static entries under traffic; forwarding follows, nothing is lost.

    /usr/bin/python3 test/reload/l2fib_update_test.py [--pipefwd build/app/pipefwd] [--updates 12]

A paced replay on p0 (16 flows from 16 learned stations, sequence numbers in
the payload) runs through rx -> l2 -> tx. Flows 0-7 go to MAC X, flows 8-15
to MAC Y, both static entries. Every ~150 ms the script flips X or Y
(alternately) between p1 and p2 and sends SIGHUP. In the first half the
entries live in a static file and only that file is rewritten (the topology
file does not change: reload must see the file's stamp); then the topology
switches to an inline static list and the flips rewrite the topology file.
Each reload hands the difference to the lcore running l2, which applies it
between bursts. At the end: every reload applied, zero drops, nothing
flooded, the 16 sources learned once and never lost (learned == 16, no
miss), every flow in order on each port and complete when merged, each
flow's traffic changed ports at least twice, and its last frames left by
the port of the final configuration. No mbuf leaked.
"""
import argparse
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
import replaylib  # noqa: E402
from pftest import LogFollower, check_run, finish, write_atomic, write_pcap  # noqa: E402

FLOWS = 16
PACE_PPS = 50000
MAC_X = "02:00:00:00:0a:01"
MAC_Y = "02:00:00:00:0b:01"

TOPOLOGY = """# l2fib update test (generated)
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning, --no-telemetry]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={inp},tx_pcap={out0}" }}
  p1: {{ device: "net_pcap1,rx_pcap={empty},tx_pcap={out1}" }}
  p2: {{ device: "net_pcap2,rx_pcap={empty},tx_pcap={out2}" }}
stages:
  rx: {{ type: rx, ports: [p0, p1, p2], pace_pps: {pps}, next: l2 }}
  l2:
    type: l2fib
    ports: [p0, p1, p2]
    age_s: 3600
    static: {static}
    next: tx
  tx: {{ type: tx, ports: [p0, p1, p2] }}
rings:
  default: {{ size: 8192, burst: 32 }}
lcores:
  1: [rx, l2, tx]
"""


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def frame(flow, seq):
    dst = mac_bytes(MAC_X if flow < 8 else MAC_Y)
    src = bytes([2, 0, 0, 0, 0x10, flow])
    payload = struct.pack("!II", flow, seq) + b"l" * 38
    return dst + src + b"\x88\xb5" + payload   # local experimental EtherType, 60 bytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipefwd", default=os.path.join(ROOT, "build", "app", "pipefwd"))
    ap.add_argument("--updates", type=int, default=12)
    ap.add_argument("--interval", type=float, default=0.15)
    args = ap.parse_args()

    total = int(PACE_PPS * (args.updates * args.interval + 1.2))
    total -= total % FLOWS
    d = tempfile.mkdtemp(prefix="l2fib-update-")
    paths = {k: f"{d}/{k}.pcap" for k in ("inp", "empty", "out0", "out1", "out2")}
    macs = f"{d}/static.macs"
    write_pcap(paths["inp"], (frame(i % FLOWS, i // FLOWS) for i in range(total)))
    replaylib.write_pcap(paths["empty"], [])
    topo = f"{d}/topology.yaml"
    port = {"x": "p1", "y": "p1"}

    def write_config(in_file):
        if in_file:
            write_atomic(macs, f"# written by the test\n{MAC_X} {port['x']}\n{MAC_Y} {port['y']}\n")
            static = macs
        else:
            static = (f'[ {{ mac: "{MAC_X}", port: {port["x"]} }}, '
                      f'{{ mac: "{MAC_Y}", port: {port["y"]} }} ]')
        text = TOPOLOGY.format(pps=PACE_PPS, static=static, **paths)
        old = open(topo).read() if os.path.exists(topo) else None
        if text != old:
            write_atomic(topo, text)
        return text == old

    write_config(True)
    stats = f"{d}/stats.json"
    proc = subprocess.Popen([args.pipefwd, "-q", "-i", "1500", "-j", stats, topo, "--",
                             f"--file-prefix=l2up_upd_{os.getpid()}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Flip only once pipefwd runs, and each flip only after the last was
    # applied: on a busy machine SIGHUPs sent blind coalesce.
    log = LogFollower(proc)
    if log.wait_for(": running ") is None:
        print("pipefwd did not start:", log.text()[-2000:])
    file_only = 0
    for i in range(args.updates):
        k = "x" if i % 2 == 0 else "y"
        port[k] = "p2" if port[k] == "p1" else "p1"
        file_only += write_config(i < args.updates // 2)
        log.reload(proc, signal.SIGHUP)
        time.sleep(args.interval)
    proc.wait(timeout=60)
    err = log.text()

    st, errors = check_run(proc.returncode, err, stats, total)
    l2 = st["stages"]["l2"]
    ctr = l2["counters"]
    updates = l2["gauges"].get("updates", 0)
    if updates < 3:
        errors.append(f"l2 updates gauge {updates}, want >= 3")
    want = {"learned": FLOWS, "mac_move": 0, "miss": 0, "flooded": 0, "hit": total,
            "aged": 0, "static_src_mismatch": 0}
    for name, v in want.items():
        if ctr.get(name) != v:
            errors.append(f"l2.{name} = {ctr.get(name)}, want {v}")
    if l2["gauges"].get("entries") != FLOWS + 2 or l2["gauges"].get("entries_static") != 2:
        errors.append(f"l2 gauges {l2['gauges']}: want {FLOWS} learned + 2 static")

    seen = {}                    # flow -> {seq: port}
    for p in ("out1", "out2"):
        last = [-1] * FLOWS
        for data in replaylib.read_pcap(paths[p]):
            flow, seq = struct.unpack("!II", data[14:22])
            if seq <= last[flow]:
                errors.append(f"{p} flow {flow}: seq {seq} after {last[flow]}")
                break
            last[flow] = seq
            if seq in seen.setdefault(flow, {}):
                errors.append(f"flow {flow} seq {seq} left twice")
            seen[flow][seq] = p
    final = {"x": "out" + port["x"][1], "y": "out" + port["y"][1]}
    got = sum(len(v) for v in seen.values())
    if got != total:
        errors.append(f"outputs hold {got} of {total} frames")
    switches = []
    for flow in range(FLOWS):
        ports = [seen.get(flow, {}).get(q) for q in range(total // FLOWS)]
        n = sum(1 for a, b in zip(ports, ports[1:]) if a != b)
        switches.append(n)
        if n < 2:
            errors.append(f"flow {flow}: changed ports {n} times, want >= 2")
        want_last = final["x" if flow < 8 else "y"]
        if ports and ports[-1] != want_last:
            errors.append(f"flow {flow}: last frame on {ports[-1]}, final config says {want_last}")
    print(f"l2fib update test: {total} frames, {st['reload']['generation']} reloads "
          f"({file_only} static-file-only), {updates} l2 updates, port changes per flow "
          f"{min(switches)}-{max(switches)}, reload max {st['reload']['max_ms']:.1f} ms")
    finish(errors, d)


if __name__ == "__main__":
    main()
