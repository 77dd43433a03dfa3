# SPDX-License-Identifier: BSD-3-Clause
"""The report half of scripts/bench.py: benchmarks.md and gnuplot PNGs.

    /usr/bin/python3 scripts/bench_report.py [BUILD/bench/results.json] [--write-report]

regenerates the report from a results file without running anything. The
report goes to BUILD/bench/report/ (benchmarks.md, img/); only
--write-report (make bench WRITE_REPORT=1) rewrites the tracked
docs/benchmarks.md and docs/img/. Its hand-written sections and the
instructions section (make bench-instr) are carried over from
docs/benchmarks.md either way.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
STAGE_ORDER = ["rx", "acl", "lpm", "acl_out", "l2fib", "xc", "tx"]


def f2(x, f="%.2f"):
    return f % x if isinstance(x, (int, float)) else "-"


def mpps_cell(s):
    if not s:
        return "-"
    if "skipped" in s:
        return "skipped"
    if "mpps" not in s:
        return "failed"
    return "%.2f ±%.0f%%" % (s["mpps"], s.get("spread_pct", 0))


def core_cycles(s, tsc):
    """Cycles of one worker core per packet (the fused layout uses one core)."""
    return tsc / (s["mpps"] * 1e6) if tsc and s and s.get("mpps") else None


def human(n):
    for div, suf in ((1 << 20, "M"), (1 << 10, "k")):
        if n >= div and n % div == 0:
            return "%d%s" % (n // div, suf)
    return str(n)


def shown(path):
    """@path relative to the source tree when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def report_doc(out, write_report):
    """Where a report goes: docs/benchmarks.md when asked, else OUT/report/."""
    return DOC if write_report else os.path.join(out, "report", "benchmarks.md")


def gnuplot(script, name, img):
    if shutil.which("gnuplot") is None:
        return False
    os.makedirs(img, exist_ok=True)
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        print("bench: gnuplot %s failed: %s" % (name, r.stderr.strip()), file=sys.stderr)
        return False
    return True


def plots(res, out, img):
    d = os.path.join(out, "plots")
    os.makedirs(d, exist_ok=True)
    made = {}
    term = "set terminal pngcairo size 960,480 font 'Sans,10'\n"
    cases = [r for r in res["cases"] if "skipped" not in r]
    tsc = res.get("tsc_hz")

    # 1. Mpps per case against the peer.
    dat = os.path.join(d, "mpps.dat")
    with open(dat, "w") as f:
        f.write("# case fused pipelined peer\n")
        for r in cases:
            p = r["pipefwd"]
            f.write('"%s" %s %s %s\n' % (r["case"], f2(p.get("fused", {}).get("mpps")),
                                         f2(p.get("pipelined", {}).get("mpps")),
                                         f2(r.get("peer_mpps"))))
    png = os.path.join(img, "bench_mpps.png")
    if cases and gnuplot(term + """
set output '%s'
set title 'Mpps per case (median; peer = the first peer of the case, same vdevs and traffic)'
set datafile missing '-'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'Mpps'
set yrange [0:*]
set grid ytics
set xtics rotate by -30
set key top right
plot '%s' using 2:xtic(1) title 'pipefwd fused', '' using 3 title 'pipefwd pipelined', \
     '' using 4 title 'peer'
""" % (png, dat), "mpps", img):
        made["mpps"] = png

    # 2. Cycles per packet per stage (fused), plus the runtime's own share.
    names = [s for s in STAGE_ORDER if any(s in r["pipefwd"].get("fused", {}).get(
        "cycles_per_packet", {}) for r in cases)]
    dat = os.path.join(d, "cycles.dat")
    rows = 0
    with open(dat, "w") as f:
        f.write("case %s runtime\n" % " ".join(names))
        for r in cases:
            fu = r["pipefwd"].get("fused", {})
            cpp = fu.get("cycles_per_packet")
            if not cpp:
                continue
            core = core_cycles(fu, tsc)
            other = max(core - sum(cpp.values()), 0) if core else 0
            f.write('"%s" %s %.1f\n' % (r["case"], " ".join("%.1f" % cpp.get(s, 0) for s in names),
                                        other))
            rows += 1
    png = os.path.join(img, "bench_cycles.png")
    if rows and gnuplot(term + """
set output '%s'
set title 'Cycles per packet per stage, fused layout (runtime = core cycles/packet minus stages)'
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel 'cycles per packet'
set yrange [0:*]
set grid ytics
set xtics rotate by -30
set key outside right
plot for [i=2:%d] '%s' using i:xtic(1) title columnheader(i)
""" % (png, len(names) + 2, dat), "cycles", img):
        made["cycles"] = png

    sweeps = {s["name"]: s for s in res.get("sweeps", [])}
    # 3. Burst-size curve.
    sw = sweeps.get("burst")
    pts = [p for p in (sw or {}).get("points", []) if p.get("mpps")]
    if pts:
        dat = os.path.join(d, "burst.dat")
        with open(dat, "w") as f:
            f.write("burst mpps stage_cpp core_cpp\n")
            for p in pts:
                f.write("%d %.3f %s %s\n" % (p["value"], p["mpps"],
                                             f2(p.get("cycles_per_packet", {}).get(sw["stage"]), "%.1f"),
                                             f2(core_cycles(p, tsc), "%.1f")))
        png = os.path.join(img, "bench_burst.png")
        if gnuplot(term + """
set output '%s'
set title '%s (fused)'
set datafile missing '-'
set logscale x 2
set xlabel 'burst (packets per rx burst and per ring dequeue)'
set ylabel 'Mpps'
set y2label 'cycles per packet'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set key bottom right
plot '%s' using 1:2 with linespoints lw 2 title 'Mpps', \
     '' using 1:3 axes x1y2 with linespoints title 'lpm stage cycles/packet', \
     '' using 1:4 axes x1y2 with linespoints title 'core cycles/packet'
""" % (png, sw["title"], dat), "burst", img):
            made["burst"] = png

    # 4. Cost against table size.
    series = []
    for key in ("routes", "acl", "macs"):
        sw = sweeps.get(key)
        pts = [p for p in (sw or {}).get("points", []) if p.get("cycles_per_packet")]
        if not pts:
            continue
        dat = os.path.join(d, "size-%s.dat" % key)
        with open(dat, "w") as f:
            for p in pts:
                f.write("%d %.1f\n" % (p["value"], p["cycles_per_packet"].get(sw["stage"], 0)))
        series.append("'%s' using 1:2 with linespoints lw 2 title '%s stage vs %s'" % (
            dat, sw["stage"], sw["title"]))
    if series:
        png = os.path.join(img, "bench_tables.png")
        if gnuplot(term + """
set output '%s'
set title 'Stage cycles per packet against table size (fused, 64-byte frames)'
set logscale x 10
set xlabel 'table entries'
set ylabel 'cycles per packet'
set yrange [0:*]
set grid
set key top left
plot %s
""" % (png, ", \\\n     ".join(series)), "tables", img):
            made["tables"] = png
    return made


def targets(res):
    """The figures issue 8 aims for, measured in this run."""
    by = {r["case"]: r for r in res["cases"] if "skipped" not in r}

    def fused(c):
        return by.get(c, {}).get("pipefwd", {}).get("fused", {}).get("mpps")

    def ratio(c):
        return by.get(c, {}).get("ratio_fused")

    def own(a, b):
        return fused(a) / fused(b) if fused(a) and fused(b) else None

    hand = [r["handoff_cycles_per_edge"] for r in by.values() if "handoff_cycles_per_edge" in r]
    rows = [
        ("Pass-through fused vs testpmd io", ">= 0.95x", ratio("pass")),
        ("L3 fused, 1k routes vs l3fwd LPM", ">= 1.0x", ratio("l3-1k")),
        ("L3 fused, 1M routes vs its own 1k", ">= 0.8x", own("l3-1M", "l3-1k")),
        ("ACL fused, 1000 rules vs l3fwd ACL", ">= 1.0x", ratio("acl-1000")),
        ("L2 bridge, 1M MACs vs its own 1k", ">= 0.7x", own("l2-1M", "l2-1k")),
    ]
    out = []
    for name, goal, v in rows:
        lim = float(goal.split()[1].rstrip("x"))
        out.append((name, goal, f2(v, "%.2fx"), "-" if v is None else ("met" if v >= lim else "not met")))
    if hand:
        worst = max(hand)
        out.append(("Pipeline hand-off per edge (worst case)", "<= 15 cycles", "%.0f" % worst,
                    "met" if worst <= 15 else "not met"))
    return out


def targets12(res):
    """Issue 12's wall-clock targets: pipefwd fused over a named peer."""
    by = {r["case"]: r for r in res["cases"] if "skipped" not in r}

    def ratio(c, peer):
        f = by.get(c, {}).get("pipefwd", {}).get("fused", {}).get("mpps")
        pm = by.get(c, {}).get("peers", {}).get(peer, {}).get("mpps")
        return f / pm if f and pm else None

    rows = [
        ("L3 fused, 1k routes vs l3fwd LPM", ">= 1.0x", ratio("l3-1k", "l3fwd-lpm")),
        ("ACL fused, 1000 rules vs l3fwd ACL", ">= 1.0x", ratio("acl-1000", "l3fwd-acl")),
        ("Pass-through fused vs testpmd io", ">= 0.8x", ratio("pass", "testpmd-io")),
        ("L2 bridge fused, 16k MACs vs OVS-DPDK NORMAL", ">= 3x", ratio("l2-16k", "ovs-normal")),
        ("L3 fused, 1k routes vs l3fwd-graph", ">= 1.0x", ratio("l3-1k", "l3fwd-graph")),
    ]
    out = []
    for name, goal, v in rows:
        lim = float(goal.split()[1].rstrip("x"))
        out.append((name, goal, f2(v, "%.2fx"), "not in this run" if v is None else
                    ("met" if v >= lim else "not met")))
    return out


# Sections report() writes; any other "## " section of the existing document
# (another tool's, e.g. the instruction counts) is kept, before Commands.
OWN_SECTIONS = ("Machine", "Method", "pipefwd against the peers", "Cycles per packet per stage",
                "The planner against the measurement", "Burst-size sweep", "Cost against table size", "Targets (issue 12, wall clock)",
                "Targets (issue 8)", "Start to forwarding", "Commands")


def foreign_sections(path):
    try:
        text = open(path).read()
    except OSError:
        return []
    # The instruction counts between their markers are carried over apart (report()).
    b, e = text.find("<!-- instr:begin -->"), text.find("<!-- instr:end -->")
    if 0 <= b < e:
        text = text[:b] + text[e + len("<!-- instr:end -->"):]
    out, cur = [], None
    for ln in text.splitlines():
        if ln.startswith("## "):
            cur = None if ln[3:].strip() in OWN_SECTIONS else [ln]
            if cur:
                out.append(cur)
        elif cur is not None:
            cur.append(ln)
    return ["\n".join(sec).rstrip() + "\n" for sec in out]


def report(res, out, doc=None):
    """The report of @res into @doc (default OUT/report/benchmarks.md), its
    PNGs in img/ beside it."""
    doc = doc or report_doc(out, False)
    made = plots(res, out, os.path.join(os.path.dirname(doc), "img"))
    m = res["machine"]
    tsc = res.get("tsc_hz")
    L = []
    w = L.append
    w("# Benchmarks\n")
    w("Generated by `make bench%s` (scripts/bench.py) on %s at commit `%s`; %d alternating rounds "
      "per case (3 for sweeps and the largest tables, which take a minute to load), %.1f s warm-up and %.1f s measurement window per run; the whole run took %.0f s. "
      "Regenerate with `make bench WRITE_REPORT=1` (full) or `make bench QUICK=1 "
      "WRITE_REPORT=1` (the CI subset; without WRITE_REPORT the report goes to "
      "build/bench/report/ and docs/ stays as it is); raw numbers: `build/bench/results.json`.\n" % (
          " QUICK=1" if res["quick"] else "", res["date"], res["commit"], res["rounds"],
          res["warmup_s"], res["window_s"], res.get("elapsed_s", 0)))
    if res.get("note"):
        w("Note: %s\n" % res["note"])
    w("## Machine\n")
    w("| | |\n|---|---|")
    for k in ("Model name", "CPU(s)", "Core(s) per socket", "Thread(s) per core",
              "Hypervisor vendor", "L1d cache", "L2 cache", "L3 cache", "BogoMIPS"):
        if k in m:
            w("| %s | %s |" % (k, m[k]))
    if tsc:
        w("| TSC | %.3f GHz (1 Mpps on one core = %.0f cycles per packet) |" % (tsc / 1e9, tsc / 1e6))
    w("| kernel | %s |\n| DPDK | %s (Debian packages) |" % (m.get("kernel", "?"), m.get("dpdk", "?")))
    if "load_avg_at_start" in m:
        w("| load average at start | %.2f |" % m["load_avg_at_start"])
    w("")
    w("The two CPUs are shared with other jobs while this runs, so absolute rates are noisy: "
      "read the **ratios**, which compare runs made minutes apart in alternation (A B A B ...) "
      "on the same devices and the same traffic.\n")
    w("## Method\n")
    w("- Every program reads `net_pcap0,rx_pcap=F,infinite_rx=1` (the file is preloaded into "
      "mbufs and replayed forever) and transmits into `net_null0,no-rx=1`. EAL: `--no-huge -m 512 "
      "--no-pci` (2048 MB for the large tables). Lcores are pinned the same way for "
      "every program: the main lcore on CPU 0, the (first) worker on CPU 1; a pipelined "
      "layout's second worker shares CPU 0 with the mostly sleeping main lcore.")
    w("- Rate: the sink's `opackets` read from DPDK's telemetry socket "
      "(`/ethdev/stats,1`) at the end of the warm-up and at the end of the window, for pipefwd "
      "and the peers alike. pipefwd's own `totals.tx / seconds` from `-j` is kept in results.json "
      "(`json_mpps`) as a cross-check; cycles per packet per stage come from the same file.")
    w("- Each case runs its pipefwd layouts and its peers in turn, %d rounds; tables show the "
      "median and the spread ((max - min) / median)." % res["rounds"])
    w("- Layouts: *fused* puts every stage on one worker lcore (run to completion); *pipelined* "
      "splits them over two worker lcores with a ring between (the split is listed under "
      "Commands). The peers use one worker lcore.")
    w("- Hand-off: pipelined minus fused, summed stage cycles per packet; the split adds one "
      "cross-lcore edge.")
    w("- Traffic (generated into build/bench/traffic/): " + "; ".join(
        "**%s**: %s" % (k, v["desc"]) for k, v in res["traffic"].items()) +
      ". Sources in 192.168/16, destinations uniform over the unicast space (the same frames "
      "whatever the table size); L2 cases spread destination MACs over the whole table.")
    w("- Tables (build/bench/tables/): N routes are a default route (as 0/1 + 128/1) and "
      "N-2 random unicast prefixes, /13../24 with 2 % over /25../32 (tbl8 groups); "
      "N ACL rules are "
      "N-1 deny rules the traffic does not match plus one permit-all, so every packet walks the "
      "whole classifier; pipefwd and the peer load the same entries.")
    w("- Peers are built or run from Debian's packages, never copied into the tree: "
      "`dpdk-testpmd` (io: the I/O ceiling of these vdevs; mac: plus a MAC rewrite) and "
      "`l3fwd` compiled from the dpdk-doc package's /usr/share/dpdk/examples/l3fwd into "
      "build/bench/peers/ with these edits to that copy (`--parse-ptype` on the command line "
      "gives it packet types):")
    for p in res.get("l3fwd_patches", []):
        w("  - `%s`: `sed -i '%s'`" % (p["file"], p["sed"]))
    w("  (vdevs have no RX checksum offload, so l3fwd does not verify IPv4 checksums while "
      "pipefwd's rx does; LPM capacity raised so the 1M-route table loads; per-route printf "
      "removed.)")
    w("- `l3fwd-graph` (DPDK's rte_graph/rte_node: ethdev_rx -> pkt_cls -> ip4_lookup -> "
      "ip4_rewrite -> ethdev_tx) is built the same way from "
      "/usr/share/dpdk/examples/l3fwd-graph into build/bench/peers/l3fwd-graph-src-N/. Its routes "
      "are compiled into main.c, so the copy gets the case's route table: bench.py writes "
      "`bench_routes.h` from the same routes file pipefwd loads (every route via port 1, "
      "rewritten to the same gateway MAC with `--eth-dest`) and these edits include it and key "
      "the next hop by port (rte_node's ip4_rewrite holds 64 next hops, the example uses the "
      "route index):")
    for p in res.get("l3fwd_graph_patches", []):
        w("  - `%s`: `sed -i '%s'`" % (p["file"], p["sed"]))
    w("  It opens one tx queue per lcore on every port (main + worker = 2), so its net_pcap0 "
      "gets `tx_pcap=/dev/null` twice (nothing is routed to port 0). It has no RX checksum "
      "offload to ask for and does not verify IPv4 checksums either. Its bursts are rte_graph's "
      "256 packets (`RTE_GRAPH_BURST_SIZE`, fixed when librte_node was built), not 32, and on "
      "these vdevs that costs: its own node table (printed each second into its log under "
      "build/bench/logs/) puts most of the cycles in `ethdev_rx` (the pcap copy into freshly "
      "allocated mbufs), and `dpdk-testpmd` io with `--burst=256` also runs at 0.5-0.7x its "
      "`--burst=32` rate here (without hugepages a 256-mbuf burst cycles far more mbufs through "
      "the caches and TLB than a 32 one). Read its row as rte_graph at its own burst on these "
      "vdevs, not as the graph dispatch's cost.")
    w("- OVS-DPDK (`ovs-normal`, Debian's openvswitch-switch-dpdk: `ovs-vswitchd-dpdk`) is run "
      "by scripts/bench_ovs.py: a private ovsdb-server and ovs-vswitchd with every file "
      "(database, sockets, logs) in a temp dir of their own and ovs-vswitchd in a network "
      "namespace of its own; `dpdk-extra=\"--no-huge --legacy-mem -m 1024 --no-pci "
      "--file-prefix=...\"`, the PMD thread on CPU 1 (`pmd-cpu-mask`), the main thread on CPU "
      "0. One netdev bridge, default flow table (the NORMAL action: MAC learning), two dpdk "
      "ports on the same vdevs and pcap as pipefwd: the net_null0 sink (added first, so DPDK "
      "port 0 is the one read) and net_pcap0. The table's MACs are put in OVS's MAC table as "
      "static entries on the sink port (`ovs-appctl fdb/add`, `mac-table-size` = MACs + 4096, "
      "as pipefwd's `table_size`) before traffic starts, as pipefwd loads them from `static:`, "
      "so no frame is flooded. The EMC, SMC and megaflow cache keep OVS's defaults. Its "
      "warm-up is 3 s instead of %.1f s (the megaflow cache fills through upcalls on the "
      "first packets); the window and the counter read are the same.\n" % res["warmup_s"])

    w("## pipefwd against the peers\n")
    w("| case | traffic | pipefwd fused Mpps | pipefwd pipelined Mpps | peer | peer Mpps | "
      "fused / peer | pipelined / peer | hand-off cycles/edge |")
    w("|---|---|---|---|---|---|---|---|---|")
    for r in res["cases"]:
        p = r.get("pipefwd", {})
        peers = r.get("peers", {})
        first = True
        for name, ps in (list(peers.items()) or [(None, None)]):
            w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["title"] if first else "", r["traffic"] if first else "",
                mpps_cell(p.get("fused")) if first else "",
                mpps_cell(p.get("pipelined")) if first else "",
                name or "none", mpps_cell(ps) if ps else "-",
                f2(p.get("fused", {}).get("mpps") / ps["mpps"], "%.2fx")
                if ps and ps.get("mpps") and p.get("fused", {}).get("mpps") else "-",
                f2(p.get("pipelined", {}).get("mpps") / ps["mpps"], "%.2fx")
                if ps and ps.get("mpps") and p.get("pipelined", {}).get("mpps") else "-",
                f2(r.get("handoff_cycles_per_edge"), "%.0f") if first else ""))
            first = False
    skipped = [r for r in res["cases"] if "skipped" in r]
    if skipped:
        w("")
        w("Not measured for pipefwd in this run (peers still ran): " + "; ".join(
            "%s: `%s`" % (r["case"], r["skipped"]) for r in skipped) + ".")
    w("")
    if "mpps" in made:
        w("![Mpps per case](img/bench_mpps.png)\n")

    w("## Cycles per packet per stage\n")
    w("From pipefwd's own counters (`stages.*.cycles_per_packet`, median over the runs). *core* "
      "is the worker core's cycles per packet (TSC / rate); *runtime* is core minus the stages "
      "(the loop, ring and port calls outside any stage).\n")
    names = [s for s in STAGE_ORDER if any(
        s in r.get("pipefwd", {}).get(lay, {}).get("cycles_per_packet", {})
        for r in res["cases"] for lay in ("fused", "pipelined"))]
    w("| case | layout | lcores | %s | stages | core | avg burst |" % " | ".join(names))
    w("|---|---|---|%s---|---|---|" % ("---|" * len(names)))
    for r in res["cases"]:
        for lay in ("fused", "pipelined"):
            s = r.get("pipefwd", {}).get(lay, {})
            cpp = s.get("cycles_per_packet")
            if not cpp:
                continue
            core = core_cycles(s, tsc) if lay == "fused" else None
            w("| %s | %s | %s | %s | %.0f | %s | %s |" % (
                r["case"], lay, " ".join("%s:[%s]" % (k, ",".join(v))
                                         for k, v in s.get("lcores", {}).items()),
                " | ".join(f2(cpp.get(n), "%.0f") for n in names), sum(cpp.values()),
                f2(core, "%.0f"), f2(s.get("avg_burst", {}).get("rx"), "%.0f")))
    w("")
    if "cycles" in made:
        w("![cycles per packet per stage](img/bench_cycles.png)\n")

    pred = [r for r in res["cases"] if r.get("prediction")]
    if pred:
        w("## The planner against the measurement\n")
        w("`/pipefwd/plan,cores=2,all=1` asked at the end of each run's window (docs/scaling.md, "
          "section 5): each layout's Mpps predicted from the costs the fused run measured and "
          "from those the pipelined run measured, medians over the runs, against the wall-clock "
          "Mpps and against *per CPU second*: each worker lcore's packets over the time the "
          "scheduler gave it (/proc/PID/task/TID/schedstat) less its idle passes, the slowest "
          "lcore's, which is what the layout forwards on CPUs of its own (the model's claim) "
          "whatever else runs on the machine. *share*: the CPU the lcores got (median). "
          "`<=`: an lcore idled for more than its CPU time (preempted while idle) and could "
          "not be measured; the rate is then at most the other's (its error in brackets).\n")
        w("| case | layout | wall Mpps | share | per CPU second | from fused run | error | "
          "from pipelined run | error |")
        w("|---|---|---|---|---|---|---|---|---|")
        for r in pred:
            for lay, v in r["prediction"].items():
                s = r["pipefwd"].get(lay, {})
                shares = [sh for sh in s.get("cpu_share", []) if sh]
                share = " ".join("%s:%.0f%%" % (k, 100 * statistics.median(
                    [sh.get(k, 0) for sh in shares])) for k in sorted(shares[0])) if shares else "-"
                m = v.get("free_mpps")

                def err(p):
                    return "-" if not p or not m else "%s%+.0f%%" % (
                        "(" if v.get("free_upper") else "", 100.0 * (p - m) / m) + (
                        ")" if v.get("free_upper") else "")

                w("| %s | %s | %s | %s | %s%s | %s | %s | %s | %s |" % (
                    r["case"], lay, f2(v.get("wall_mpps")), share,
                    "<= " if v.get("free_upper") else "", f2(m),
                    f2(v.get("from_fused")), err(v.get("from_fused")),
                    f2(v.get("from_pipelined")), err(v.get("from_pipelined"))))
        w("")

    sc = res.get("scaling")
    if sc and sc.get("layouts"):
        w("## Rx on two queues: one lcore against two\n")
        w("scripts/bench_rxq.py's layouts (docs/scaling.md, section 2), %d alternated rounds of "
          "%d s, lcores %s: `one` reads queue 0 and runs rx, lpm, tx on one lcore; `inst` runs "
          "every stage as 2 instances, rx.k on queue k, the flow hash sending each packet to "
          "an lpm instance (half of them cross lcores); `affine` the same with rx `affine: "
          "true` (nothing crosses); `split` two independent pipelines. The planner predicts "
          "`rss-affine` and `rss-fanout` from `one`'s run.\n" % (
              sc["rounds"], sc["secs"], sc.get("pin", "-")))
        w("| layout | Mpps (median) | vs one | per CPU second | vs one | planner | error | "
          "stage cycles/packet |")
        w("|---|---|---|---|---|---|---|---|")
        plan = {v["layout"]: v for v in sc.get("planner", {}).values()}
        for name, v in sc["layouts"].items():
            pl = plan.get(name)
            w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, f2(v.get("median")), f2(v.get("vs_one"), "%.2fx"),
                f2(v.get("cpu_median")), f2(v.get("cpu_vs_one"), "%.2fx"),
                f2(pl["median"]) if pl else "-",
                "%+.0f%%" % pl["error_pct"] if pl else "-",
                " ".join("%s %.0f" % kv for kv in sorted(v.get("cycles", {}).items()))))
        w("")

    sweeps = {s["name"]: s for s in res.get("sweeps", [])}
    if "burst" in sweeps:
        sw = sweeps["burst"]
        w("## Burst-size sweep\n")
        w("%s, fused: `rings: { default: { burst: B } }` sets both the rx burst and every ring "
          "dequeue burst.\n" % sw["title"])
        w("| burst | Mpps | %s cycles/packet | core cycles/packet |\n|---|---|---|---|" % sw["stage"])
        for p in sw["points"]:
            w("| %d | %s | %s | %s |" % (p["value"], mpps_cell(p),
                                         f2(p.get("cycles_per_packet", {}).get(sw["stage"]), "%.0f"),
                                         f2(core_cycles(p, tsc), "%.0f")))
        w("")
        if "burst" in made:
            w("![burst-size sweep](img/bench_burst.png)\n")
    size = [sweeps[k] for k in ("routes", "acl", "macs") if k in sweeps]
    if size:
        w("## Cost against table size\n")
        for sw in size:
            w("**%s** (%s stage, fused):\n" % (sw["title"], sw["stage"]))
            w("| entries | Mpps | %s cycles/packet | core cycles/packet |\n|---|---|---|---|" %
              sw["stage"])
            for p in sw["points"]:
                if "skipped" in p:
                    w("| %s | skipped: %s | | |" % (human(p["value"]), p["skipped"]))
                    continue
                w("| %s | %s | %s | %s |" % (human(p["value"]), mpps_cell(p),
                                             f2(p.get("cycles_per_packet", {}).get(sw["stage"]), "%.0f"),
                                             f2(core_cycles(p, tsc), "%.0f")))
            w("")
        if "tables" in made:
            w("![cost against table size](img/bench_tables.png)\n")
    elif res["quick"]:
        w("## Cost against table size\n\nNot in the quick set: run `make bench`.\n")

    w("## Targets (issue 12, wall clock)\n")
    w("Ratios of medians from the same alternating run (instruction counts: see "
      "`make bench-instr`).\n")
    w("| target | goal | measured | |\n|---|---|---|---|")
    for t in targets12(res):
        w("| %s | %s | %s | %s |" % t)
    w("")

    w("## Targets (issue 8)\n")
    w("| target | goal | measured | |\n|---|---|---|---|")
    for t in targets(res):
        w("| %s | %s | %s | %s |" % t)
    w("")

    starts = [(r["case"], lay, s) for r in res["cases"]
              for lay, s in r.get("pipefwd", {}).items() if s.get("start_s")]
    if starts:
        w("## Start to forwarding\n")
        w("Seconds from starting pipefwd to the first packet at the sink (EAL, parsing the "
          "tables, building them, ports), median over the runs; *table build* is the lpm/lpm6 "
          "stages' own `built in` log figure (issue 14: 1M IPv6 routes load in under 5 s).\n")
        w("| case | layout | start to forwarding s | table build s |\n|---|---|---|---|")
        for case, lay, s in starts:
            w("| %s | %s | %.1f | %s |" % (case, lay, statistics.median(s["start_s"]),
                                           f2(statistics.median(s["table_build_s"]), "%.1f")
                                           if s.get("table_build_s") else "-"))
        w("")

    for sec in foreign_sections(DOC):
        w(sec)
    w("## Commands\n")
    w("Exactly what ran (paths under build/bench/ are regenerated by `make bench`; "
      "`--file-prefix` keeps parallel DPDK programs apart).\n")
    w("```")
    for r in res["cases"]:
        for lay, s in r.get("pipefwd", {}).items():
            if s.get("command"):
                w("# %s, pipefwd %s, lcores %s" % (r["case"], lay, s.get("lcores")))
                w(s["command"])
        for name, s in r.get("peers", {}).items():
            if s.get("command"):
                w("# %s, %s" % (r["case"], name))
                w(s["command"])
    for sw in res.get("sweeps", []):
        for p in sw["points"]:
            if p.get("command"):
                w("# sweep %s = %s" % (sw["key"], p["value"]))
                w(p["command"])
    w("```\n")
    example = next((r["pipefwd"]["pipelined"]["topology"] for r in res["cases"]
                    if r.get("case") == "l3-1k" and r.get("pipefwd", {}).get("pipelined", {}).get("topology")), None)
    path = os.path.join(out, example.split("bench/", 1)[1]) if example else None
    if path and os.path.exists(path):
        w("The generated topology of the L3 1k case, pipelined (%s):\n" % example)
        w("```yaml")
        w(open(path).read().rstrip().replace(os.path.dirname(out) + "/", "build/"))
        w("```\n")
    w("Compare two builds: `make bench-compare BASE=<ref>` builds `<ref>` into build/bench/base/, "
      "runs the quick cases on both binaries alternately and flags any case more than 5% slower "
      "(exit status 1; details in build/bench/compare.json).")
    os.makedirs(os.path.dirname(doc), exist_ok=True)
    # The "Instructions per packet" section belongs to `make bench-instr`
    # (scripts/bench_instr.py): carried over between its markers, unchanged.
    src = doc if os.path.exists(doc) else DOC
    old = open(src).read() if os.path.exists(src) else ""
    b, e = old.find("<!-- instr:begin -->"), old.find("<!-- instr:end -->")
    if 0 <= b < e:
        L += ["", old[b:e + len("<!-- instr:end -->")]]
    with open(doc, "w") as f:
        f.write("\n".join(L) + "\n")
    print("bench: wrote %s%s%s" % (shown(doc), "".join(" " + shown(p) for p in made.values()),
        "" if doc == DOC else " (docs/ unchanged: --write-report, make bench WRITE_REPORT=1, "
        "rewrites docs/benchmarks.md)"))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--write-report"]
    path = args[0] if args else os.path.join(ROOT, "build", "bench", "results.json")
    with open(path) as f:
        r = json.load(f)
    out = os.path.dirname(os.path.abspath(path))
    report(r, out, report_doc(out, "--write-report" in sys.argv[1:]))
