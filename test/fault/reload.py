#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: a reload that must be refused, under traffic; the old config keeps running.

    /usr/bin/python3 test/fault/reload.py --mode bad-file|ring-size [--pipefwd build/app/pipefwd]

30000 frames at 20 kpps go through rx -> xc -> tx, lossless
(runtime.backpressure: a starved lcore slows the input, it cannot drop it, so
any loss is the reload's). Mid-stream the topology
file is replaced and SIGHUP sent:
  bad-file:  a YAML syntax error (an unclosed flow sequence);
  ring-size: a valid file that changes the ring size (needs a restart).
Checks: the refusal is logged with `file:line:col: error:` (ring-size: naming
the key `rings.<ring>.size`); reload.failures == 1 and generation == 0 in the
stats JSON; zero loss attributable to the attempt: every frame forwarded, in
order, no drop; nothing unaccounted, mempool back to zero, exit 0.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultlib import (EAL, Pipefwd, Scratch, args_parser, check_common, check_flow_order,  # noqa: E402
                      expect_eq, finish, flows_input, load_stats, read_pcap, signal, write_pcap)

N = 30000

TOPO = """# reload fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/p0.pcap" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/out.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0], pace_pps: 20000, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: {size}, burst: 32 }}
runtime: {{ backpressure: true }}
lcores:
  1: [rx, xc]
  2: [tx]
"""


def main():
    ap = args_parser(__doc__)
    ap.add_argument("--mode", choices=["bad-file", "ring-size"], default="bad-file")
    args = ap.parse_args()
    sc = Scratch(f"reload-{args.mode}")
    errors = []
    flows_input(sc.path("in.pcap"), N)
    write_pcap(sc.path("empty.pcap"), [])
    topo = sc.path("topology.yaml")
    good = TOPO.format(eal=EAL, d=sc.dir, size=4096)
    with open(topo, "w") as f:
        f.write(good)
    stats = sc.path("stats.json")
    pf = Pipefwd(args.pipefwd, topo, stats, args=["-i", "300"], prefix=f"reload_{args.mode}")
    line = None
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start")
    else:
        pf.wait_log("no such line", timeout=0.3)
        if args.mode == "bad-file":
            new = good + "extra: [unclosed\n"
            want = re.escape(topo) + r":\d+:\d+: error: YAML parse error"
        else:
            new = TOPO.format(eal=EAL, d=sc.dir, size=8192)
            want = (re.escape(topo) + r":\d+:\d+: error: rings\.(rx->xc|xc->tx)\.size: "
                    r"changing a ring size needs a restart")
        with open(topo + ".tmp", "w") as f:
            f.write(new)
        os.replace(topo + ".tmp", topo)
        start = len(pf.log)
        pf.signal(signal.SIGHUP)
        if pf.wait_log("reload refused", timeout=10, start=start) is None:
            errors.append("no 'reload refused' logged")
        line = next((ln for ln in pf.log[start:] if re.search(want, ln)), None)
        if line is None:
            errors.append(f"no error line matching /{want}/ in: {''.join(pf.log[start:])[-1500:]}")
    rc = pf.wait(timeout=60)
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    st = load_stats(stats, errors)
    if st is None:
        finish(f"reload {args.mode}", sc, errors, "no stats")
    expect_eq(errors, "reload.failures", st["reload"]["failures"], 1)
    expect_eq(errors, "reload.generation", st["reload"]["generation"], 0)
    out = read_pcap(sc.path("out.pcap"))
    expect_eq(errors, "output frames (no loss from the refused reload)", len(out), N)
    expect_eq(errors, "totals.dropped", st["totals"]["dropped"], 0)
    check_flow_order(out, errors)
    check_common(st, errors)
    finish(f"reload {args.mode}", sc, errors,
           f"refused: {line.strip() if line else '-'}; {len(out)}/{N} forwarded")


if __name__ == "__main__":
    main()
