#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Swap lpm route tables under traffic and lose nothing.

    /usr/bin/python3 test/reload/lpm_update_test.py [--pipefwd build/app/pipefwd] [--updates 12]
                                                    [--in-file]

A paced replay (16 flows to 10.9.0.0/16, sequence numbers in the UDP payload)
runs through rx -> lpm -> tx with a 20,000-route file loaded. Every ~150 ms the
script flips the inline route 10.9.0.0/16 between next hop a (port p1) and b
(port p2) and sends SIGHUP: each reload builds a complete new table beside the
running one and swaps it. At the end: every reload applied, zero drops of any
kind, zero unaccounted, both ports carried traffic, every flow's packets in
order on each port and, merged, complete; no mbuf leaked. The run is lossless
(runtime.backpressure); on a busy machine that starves pipefwd until its idle
exit, fewer frames are read but none may be lost (reported, not failed).

With --in-file the flipping route lives in the routes file instead: the
topology file is written once and never changes, each update rewrites only
the routes file, and reload must notice it from the file's stamp.

With --ipv6 the same runs through rx -> lpm6 -> tx: IPv6 flows to
2001:db8:9::/48, 20,000 IPv6 routes (gen_routes.py --ipv6), the flipping
route 2001:db8:9::/48.

With --live no file changes and no SIGHUP: `pipefwd-ctl route-add` puts a more
specific route (10.9.0.0/17, 2001:db8:9::/49) via b over the flows and
`route-del` takes it away again, each applied by RCU like a reload. At the end,
still under traffic, one route is added and one route-file line deleted live,
and `pipefwd-ctl changes --save` must write both into the route file (the
added line appended, the deleted one gone) and the saved topology pass --check.
"""
import argparse
import ipaddress
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
from pftest import LogFollower, check_run, finish, ipv4_udp, write_atomic, write_pcap  # noqa: E402

FLOWS = 16
PACE_PPS = 50000

TOPOLOGY = """# lpm update test (generated)
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning, --no-telemetry]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={inp},tx_pcap={out0}", mac: "02:00:00:00:00:10",
        ipv4: 192.168.0.1/24 }}
  p1: {{ device: "net_pcap1,rx_pcap={empty},tx_pcap={out1}", mac: "02:00:00:00:00:11" }}
  p2: {{ device: "net_pcap2,rx_pcap={empty},tx_pcap={out2}", mac: "02:00:00:00:00:12" }}
stages:
  rx: {{ type: rx, ports: [p0, p1, p2], pace_pps: {pps}, next: {{ ipv4: lpm, arp: lpm }} }}
  lpm:
    type: lpm
    nexthops:
      nh0: {{ port: p1, mac: "02:00:00:00:01:00" }}
      nh1: {{ port: p2, mac: "02:00:00:00:01:01" }}
      a: {{ port: p1, mac: "02:00:00:00:01:0a" }}
      b: {{ port: p2, mac: "02:00:00:00:01:0b" }}
    routes_file: {routes}
{inline}    next: tx
  tx: {{ type: tx, ports: [p0, p1, p2] }}
rings:
  default: {{ size: 8192, burst: 32 }}
runtime: {{ backpressure: true }}
lcores:
  1: [rx, lpm, tx]
"""

# The same pipeline for IPv6: lpm6 fed by rx's ipv6 edge, p0 with an IPv6 address.
TOPOLOGY6 = (TOPOLOGY.replace("lpm update test", "lpm6 update test")
             .replace("ipv4: 192.168.0.1/24", 'ipv6: "2001:db8::1/64"')
             .replace("next: {{ ipv4: lpm, arp: lpm }}", "next: {{ ipv6: lpm6 }}")
             .replace("  lpm:\n    type: lpm\n", "  lpm6:\n    type: lpm6\n")
             .replace("[rx, lpm, tx]", "[rx, lpm6, tx]"))


def frame6(flow, seq):
    payload = struct.pack("!II", flow, seq) + b"u" * 14
    udp = struct.pack("!HHHH", 10000 + flow, 7, 8 + len(payload), 0) + payload
    src = bytes.fromhex("20010db80000000000000000000000") + bytes([flow + 10])
    dst = bytes.fromhex("20010db800090000000000000000") + bytes([flow, 1])
    # UDP over IPv6 needs its checksum (RFC 8200 8.1); rx does not check it, hosts would.
    ph = src + dst + struct.pack("!IxxxB", len(udp), 17) + udp
    s = sum(struct.unpack("!%dH" % (len(ph) // 2), ph))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    udp = udp[:6] + struct.pack("!H", (~s & 0xFFFF) or 0xFFFF) + udp[8:]
    ip = struct.pack("!IHBB", 6 << 28, len(udp), 17, 64) + src + dst
    return bytes.fromhex("02000000001002000000000a86dd") + ip + udp


def frame(flow, seq):
    return ipv4_udp(bytes.fromhex("02000000001002000000000a0800"), [192, 168, 0, flow + 10],
                    [10, 9, flow, 1], seq, 10000 + flow, 7, struct.pack("!II", flow, seq) + b"u" * 14)


def topology(paths, via, in_file, v6=False):
    pfx = '"2001:db8:9::/48"' if v6 else "10.9.0.0/16"
    inline = "" if in_file else f"    routes:\n      - {{ prefix: {pfx}, via: {via} }}\n"
    return (TOPOLOGY6 if v6 else TOPOLOGY).format(pps=PACE_PPS, inline=inline, **paths)


def write_routes(paths, base, via, in_file, v6=False):
    if in_file:
        pfx = "2001:db8:9::/48" if v6 else "10.9.0.0/16"
        write_atomic(paths["routes"], base + f"{pfx} {via}   # flipped by the test\n")


CTL = os.path.join(ROOT, "scripts", "pipefwd-ctl")


def ctl(prefix, errors, *args):
    r = subprocess.run([sys.executable, CTL, "--file-prefix", prefix, "--timeout", "30"] +
                       list(args), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        errors.append(f"pipefwd-ctl {' '.join(args)}: rc {r.returncode} {r.stderr[-500:]}")
    return r.stdout


def live_flips(args, prefix, stage, v6, errors):
    """Flip the flows' route by live changes, one every --interval seconds."""
    pfx = "2001:db8:9::/49" if v6 else "10.9.0.0/17"
    t0 = time.monotonic()
    for i in range(args.updates):
        if i % 2 == 0:
            ctl(prefix, errors, "route-add", stage, pfx, "b")
        else:
            ctl(prefix, errors, "route-del", stage, pfx)
        time.sleep(max(0.0, t0 + (i + 1) * args.interval - time.monotonic()))


def live_save(paths, topo, prefix, stage, v6, base, errors, pipefwd):
    """A live add and a live delete of a route-file line, saved into the file."""
    flows = [ipaddress.ip_address("2001:db8:9::%x01" % f if v6 else "10.9.%d.1" % f)
             for f in range(FLOWS)]
    gone = next(line.split()[0] for line in base.splitlines()
                if line and not line.startswith("#") and
                not any(a in ipaddress.ip_network(line.split()[0]) for a in flows))
    add = "2001:db8:77::/48" if v6 else "10.77.0.0/16"
    ctl(prefix, errors, "route-add", stage, add, "b")
    ctl(prefix, errors, "route-del", stage, gone)
    out = ctl(prefix, errors, "changes", "--save")
    if "wrote " + paths["routes"] not in out or "applied" not in out:
        errors.append(f"changes --save: {out[-800:]}")
    with open(paths["routes"]) as f:
        lines = f.read().splitlines()
    if lines[-1] != f"{add} b" or any(line.split()[:1] == [gone] for line in lines):
        errors.append(f"saved routes file: ends {lines[-2:]}, {gone} still there: "
                      f"{any(line.split()[:1] == [gone] for line in lines)}")
    c = subprocess.run([pipefwd, "--check", topo], capture_output=True, text=True)
    if c.returncode != 0:
        errors.append(f"--check of the saved files: {c.stdout} {c.stderr[-500:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipefwd", default=os.path.join(ROOT, "build", "app", "pipefwd"))
    ap.add_argument("--updates", type=int, default=12)
    ap.add_argument("--interval", type=float, default=0.15)
    ap.add_argument("--in-file", action="store_true",
                    help="flip the route in the routes file; the topology file never changes")
    ap.add_argument("--ipv6", action="store_true", help="IPv6 through lpm6")
    ap.add_argument("--live", action="store_true",
                    help="flip by live route changes (pipefwd-ctl), then save them")
    args = ap.parse_args()
    v6 = args.ipv6
    stage = "lpm6" if v6 else "lpm"

    # Live: every change is a pipefwd-ctl run; traffic outlasts them and the save.
    total = int(PACE_PPS * (args.updates * args.interval + (5 if args.live else 1.2)))
    total -= total % FLOWS
    d = tempfile.mkdtemp(prefix="lpm-update-")
    paths = {k: f"{d}/{k}.pcap" for k in ("inp", "empty", "out0", "out1", "out2")}
    paths["routes"] = f"{d}/routes.txt"
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_routes.py"), "-n", "20000",
                    "--nexthops", "2", "-o", paths["routes"]] + (["--ipv6"] if v6 else []),
                   check=True)
    with open(paths["routes"]) as f:
        base = f.read()
    write_routes(paths, base, "a", args.in_file, v6)
    mk = frame6 if v6 else frame
    write_pcap(paths["inp"], (mk(i % FLOWS, i // FLOWS) for i in range(total)))
    replaylib.write_pcap(paths["empty"], [])
    topo = f"{d}/topology.yaml"
    text = topology(paths, "a", args.in_file, v6)
    write_atomic(topo, text.replace(", --no-telemetry]", "]") if args.live else text)
    stats = f"{d}/stats.json"
    prefix = f"lpmupd_{os.getpid()}"
    proc = subprocess.Popen([args.pipefwd, "-q", "-i", "3000", "-j", stats, topo, "--",
                             f"--file-prefix={prefix}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Flip only once pipefwd runs, and each flip only after the last was
    # applied: on a busy machine SIGHUPs sent blind coalesce.
    log = LogFollower(proc)
    if log.wait_for(": running ") is None:
        print("pipefwd did not start:", log.text()[-2000:])
    errors = []
    if args.live:
        live_flips(args, prefix, stage, v6, errors)
        live_save(paths, topo, prefix, stage, v6, base, errors, args.pipefwd)
    for i in range(0 if args.live else args.updates):
        via = "b" if i % 2 == 0 else "a"
        if args.in_file:
            write_routes(paths, base, via, True, v6)
        else:
            write_atomic(topo, topology(paths, via, False, v6))
        log.reload(proc, signal.SIGHUP)
        time.sleep(args.interval)
    proc.wait(timeout=60)
    err = log.text()
    # Live changes are no reloads of the file: only the save's reload counts there.
    st, run_errors = check_run(proc.returncode, err, stats, total, starved_ok=True,
                               min_reloads=1 if args.live else 3)
    errors += run_errors
    updates = st["stages"][stage]["gauges"].get("route_updates", 0)
    if updates < (args.updates + 1 if args.live else 2):
        errors.append(f"{stage} route_updates gauge {updates}, want >= "
                      f"{args.updates + 1 if args.live else 2}")

    got = 0
    for port in ("out1", "out2"):
        last = [-1] * FLOWS
        n = 0
        for data in replaylib.read_pcap(paths[port]):
            flow, seq = struct.unpack("!II", data[62:70] if v6 else data[42:50])
            if seq <= last[flow]:
                errors.append(f"{port} flow {flow}: seq {seq} after {last[flow]}")
                break
            last[flow] = seq
            n += 1
        if n == 0:
            errors.append(f"{port} carried nothing: the swaps did not take effect")
        got += n
    if got != st["totals"]["rx"]:
        errors.append(f"outputs hold {got} of {st['totals']['rx']} frames received")
    print(f"{stage} update test{' (routes file only)' if args.in_file else ''}"
          f"{' (live changes)' if args.live else ''}: {total} frames, "
          f"{updates} table swaps with "
          f"20000 routes, reload max {st['reload']['max_ms']:.1f} ms")
    finish(errors, d)


if __name__ == "__main__":
    main()
