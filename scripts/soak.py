#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Soak: the pipeline on looping traffic for a set time, then exact accounting.

    /usr/bin/python3 scripts/soak.py [--seconds N] [--pipefwd build/app/pipefwd]
    make soak [SOAK_SECONDS=600]          (make test runs a 20 s version)

A 1000-frame file (16 UDP flows plus 1 % frames with a bad IPv4 checksum, so
a drop reason counts all along) loops at full speed (net_pcap infinite_rx=1)
through rx -> xc -> tx into net_null, pipelined over two lcores so every
frame crosses a ring between cores. VmRSS of the process is sampled every
second. At the end (pipefwd -d: stop, drain, report):
  - exit 0, zero unaccounted, nothing in flight, mempool back to zero;
  - ip4_bad_checksum is exact (1 in 100 frames read, counting the last
    partial loop of the file); the only other drop is ring_full (the unpaced
    producer outruns the tx lcore: overload is part of the soak), and
    rx == tx + ip4_bad_checksum + ring_full;
  - flat memory: after a warm-up of a quarter of the run, VmRSS never grows
    by more than 1 % (+ 1 MiB for page granularity) over its warm-up value.
Prints packets, duration, rate and the RSS figures.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "fault"))
from faultlib import EAL, frame, write_pcap  # noqa: E402

FILE_FRAMES = 1000

TOPO = """# soak (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/loop.pcap,infinite_rx=1" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 4096, burst: 32 }}
lcores:
  1: [rx, xc]
  2: [tx]
"""


def bad_checksum(data):
    b = bytearray(data)
    b[24] ^= 0xFF
    return bytes(b)


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", 600)))
    ap.add_argument("--pipefwd", default=os.path.join(ROOT, "build", "app", "pipefwd"))
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="soak-")
    frames = [frame(i % 16, i // 16) for i in range(FILE_FRAMES)]
    for i in range(0, FILE_FRAMES, 100):
        frames[i] = bad_checksum(frames[i])
    write_pcap(os.path.join(d, "loop.pcap"), frames)
    topo = os.path.join(d, "topology.yaml")
    with open(topo, "w") as f:
        f.write(TOPO.format(eal=EAL, d=d))
    stats = os.path.join(d, "stats.json")
    cmd = [args.pipefwd, "-q", "-d", str(args.seconds), "-j", stats, topo, "--",
           f"--file-prefix=robust_soak_{os.getpid()}"]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []
    while proc.poll() is None:
        r = rss_kib(proc.pid)
        if r is not None and r > 1024:
            samples.append((time.time() - t0, r))   # past exec: the forwarder
        time.sleep(1.0)
    err = proc.stderr.read()
    rc = proc.wait()
    wall = time.time() - t0
    subprocess.run(["rm", "-rf", f"/var/run/dpdk/robust_soak_{os.getpid()}"])
    errors = []
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {err[-2000:]}")
    st = json.load(open(stats)) if os.path.exists(stats) else None
    if st is None:
        errors.append("no stats JSON")
    else:
        tot = st["totals"]
        if tot["unaccounted"] != 0 or tot["in_flight"] != 0:
            errors.append(f"accounting: {tot}")
        if st["mbufs_in_use_after_stop"] != 0:
            errors.append(f"mbufs in use after stop: {st['mbufs_in_use_after_stop']}")
        rx_st = st["stages"]["rx"]["drops"]
        bad = rx_st["ip4_bad_checksum"]
        loops, rest = divmod(tot["rx"], FILE_FRAMES)
        want_bad = loops * (FILE_FRAMES // 100) + (rest + 99) // 100
        if bad != want_bad:
            errors.append(f"ip4_bad_checksum = {bad}, expected {want_bad} for {tot['rx']} frames")
        ring_full = sum(r["ring_full"] for r in st["rings"].values())
        if tot["dropped"] != bad + ring_full:
            errors.append(f"dropped {tot['dropped']} != ip4_bad_checksum {bad} + ring_full "
                          f"{ring_full}: other drops")
        if tot["tx"] + bad + ring_full != tot["rx"]:
            errors.append(f"tx {tot['tx']} + dropped {bad + ring_full} != rx {tot['rx']}")
    warm = [r for t, r in samples if t >= args.seconds / 4]
    if len(warm) >= 2:
        base, peak = warm[0], max(warm)
        if peak > base * 1.01 + 1024:
            errors.append(f"VmRSS grew from {base} KiB to {peak} KiB after warm-up")
        rss = f"VmRSS {samples[0][1]} KiB at start, {base} KiB after warm-up, peak {peak} KiB " \
              f"({len(samples)} samples)"
    else:
        rss = f"only {len(samples)} RSS samples"
        if args.seconds >= 8:
            errors.append(rss)
    if st is not None:
        print(f"soak: {tot['rx']} packets in {st['seconds']:.1f} s "
              f"({tot['rx'] / max(st['seconds'], 1e-9) / 1e6:.2f} Mpps), tx {tot['tx']}, "
              f"dropped {tot['dropped']} (ip4_bad_checksum {bad}, ring_full {ring_full}), "
              f"unaccounted {tot['unaccounted']}, "
              f"mbufs after stop {st['mbufs_in_use_after_stop']}; {rss}; wall {wall:.1f} s")
    for e in errors:
        print("FAIL:", e)
    if errors:
        print(f"kept {d}")
    else:
        subprocess.run(["rm", "-rf", d])
        print("soak: PASS")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
