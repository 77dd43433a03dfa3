#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Instructions per packet under callgrind: pipefwd and its peers, same vdevs and traffic.

    scripts/bench_instr.py BUILD [--only CASE,...] [--no-peers] [--no-report | --write-report]
    scripts/bench_instr.py BUILD --gate test/perf/instr_baseline.json   (make test)
    scripts/bench_instr.py BUILD --write-baseline test/perf/instr_baseline.json
    scripts/bench_instr.py BUILD --report-only [--write-report]   (the section from instr.json)

Each program runs under `valgrind --tool=callgrind --separate-threads=yes
--instr-atstart=no` with the topology, tables and traffic of scripts/bench.py's
fused cases (net_pcap0,infinite_rx=1 into net_null0, 64-byte UDP, 4096 flows).
Once the sink transmits, instrumentation goes on and the counters are zeroed
(`callgrind_control --instr=on`, `-z`); after a window they are dumped (`-d`):
start-up, table loading and the idle passes of shut-down fall outside it. The
forwarding lcore is the thread with the most instructions in the dump. Packets
in the window = calls into the net_pcap rx burst function times the burst
(infinite_rx always fills it), cross-checked against the sink's opackets read
over telemetry around the window. Drivers = the inclusive cost of the calls
into the net_pcap and net_null objects; own = total - drivers; pipefwd's
clock-driven upkeep (ops->housekeep) is counted apart. Valgrind counts
instructions, so load changes nothing but the wall time.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (topologies, tables, traffic, peers: one definition)
from bench_report import report_doc  # noqa: E402

ROOT = bench.ROOT
DOC = bench.DOC
BASELINE = os.path.join(ROOT, "test", "perf", "instr_baseline.json")
BURST = 32                # rx burst of pipefwd, testpmd and l3fwd
RX_BURST = {"l3fwd-graph": 256}   # rte_node ethdev_rx asks for RTE_GRAPH_BURST_SIZE
DRIVERS = ("librte_net_pcap", "librte_net_null")
RX_DRIVER = "librte_net_pcap"
TOLERANCE_PCT = 3.0
BEGIN, END = "<!-- instr:begin -->", "<!-- instr:end -->"
# Work pipefwd runs by the clock, not per packet (ops->housekeep, about once a
# millisecond). Under valgrind a millisecond is ~150 packets instead of ~10k,
# and varies with load: counted apart, not in the figure.
UPKEEP = re.compile(r"housekeep")

# case name in bench.CASES -> peers measured here (the peers of bench.py that
# run on these vdevs; OVS and the like stay in the wall-clock benchmark).
CASES = [
    ("pass", ["testpmd-io", "testpmd-mac"]),
    ("l3-1k", ["l3fwd-lpm", "l3fwd-graph"]),
    ("acl-100", ["l3fwd-acl"]),
    ("l3v6-1k", ["l3fwd-lpm"]),
    ("acl6-100", ["l3fwd-acl"]),
    ("l2-1k", []),
    ("l2-1M", []),
]
GATE = ["pass", "l3-1k", "acl-100", "l3v6-1k", "l2-1k"]


def log(msg):
    print(msg, flush=True)

# ------------------------------------------------------- callgrind files ----


def parse_callgrind(path):
    """Totals of one callgrind output file (one thread): Ir; the inclusive Ir
    and call count of the calls from outside the driver objects into them, per
    object; and the inclusive Ir of calls into time-driven upkeep."""
    names = dict(ob={}, fn={})     # callgrind compresses each kind of name apart
    total = 0
    ob = cob = fn = cfn = None
    drv = {}
    upkeep = 0
    pending = None

    def name(kind, val):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", val)
        if not m:
            return val
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "?")

    with open(path) as f:
        for ln in f:
            if pending is not None:
                # The line after calls= carries the inclusive cost of those calls.
                parts = ln.split()
                if len(parts) >= 2:
                    if pending[0] == "upkeep":
                        upkeep += int(parts[-1])
                    else:
                        d = drv.setdefault(pending[0], dict(ir=0, calls=0))
                        d["ir"] += int(parts[-1])
                        d["calls"] += pending[1]
                pending = None
                continue
            if ln.startswith("summary:"):
                total = int(ln.split()[1])
            elif ln.startswith("ob="):
                ob = name("ob", ln[3:].strip())
                cob = None
            elif ln.startswith("fn="):
                fn = name("fn", ln[3:].strip())
                cob = None
            elif ln.startswith("cob="):
                cob = name("ob", ln[4:].strip())
            elif ln.startswith("cfn="):
                cfn = name("fn", ln[4:].strip())
            elif ln.startswith("calls="):
                target = cob if cob is not None else ob
                cob = None
                tgt = next((d for d in DRIVERS if d in (target or "")), None)
                src = next((d for d in DRIVERS if d in (ob or "")), None)
                if tgt and not src:
                    pending = (tgt, int(ln.split()[0].split("=")[1]))
                elif UPKEEP.search(cfn or "") and not UPKEEP.search(fn or ""):
                    pending = ("upkeep", 0)
    return dict(ir=total, drivers=drv, upkeep=upkeep)


def top_functions(path, pkts, n=15):
    """The n largest inclusive costs per packet (callgrind_annotate), for a
    first look at where the instructions go."""
    try:
        out = subprocess.run(["callgrind_annotate", "--inclusive=yes", path], capture_output=True,
                             text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    top = []
    for ln in out.splitlines():
        m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?:(\S+) \[(.*)\]$", ln)
        if m and "PROGRAM TOTALS" not in ln:
            top.append(dict(fn=m.group(2), obj=os.path.basename(m.group(3)),
                            inclusive=round(int(m.group(1).replace(",", "")) / pkts, 1)))
    return top[:n]


def forwarding_thread(files):
    """The dump file of the thread that forwards: the one with the most Ir."""
    best = None
    for p in files:
        r = parse_callgrind(p)
        r["file"] = p
        if best is None or r["ir"] > best["ir"]:
            best = r
    return best

# ---------------------------------------------------------------- one run ----


class Runner:
    def __init__(self, args, root):
        """bench.Bench keeps its inputs in ROOT/bench: BUILD/bench for the
        report, a temp dir of its own for the gate (tests write nowhere else)."""
        self.args = args
        ba = argparse.Namespace(build=root, quick=True, rounds=1, only=None, note=None,
                                no_report=True, write_report=False, compare=None,
                                file_prefix=args.prefix)
        self.b = bench.Bench(ba)
        self.b.pipefwd = os.path.join(args.build, "app", "pipefwd")
        self.out = self.b.out
        # Each run's callgrind files; stale ones from an earlier run would mislead.
        shutil.rmtree(os.path.join(self.out, "instr"), ignore_errors=True)
        os.makedirs(os.path.join(self.out, "instr"))
        self.seq = 0

    def commands(self, c, peers):
        """[(label, cmd, prefix, json_path)] for pipefwd fused and each peer."""
        topo, _, pcap, t = self.b.topology(c, "fused")
        topo = pin_acl_algorithm(topo)
        err = self.b.check(topo)
        if err:
            raise RuntimeError("pipefwd --check %s: %s" % (topo, err))
        prefix = "%s-%s" % (self.args.prefix, c["name"])
        js = os.path.join(self.out, "stats", "instr-%s.json" % c["name"])
        runs = [("pipefwd", [self.b.pipefwd, "-q", "-d", "3600", "-j", js, topo, "--",
                             "--file-prefix=" + prefix], prefix, js)]
        for peer in peers:
            if peer not in bench.PEERS:
                continue    # a peer this checkout's bench.py does not define yet
            cmd, _ = self.b.peer_cmd(peer, pcap, t, c["tables"])
            pp = "%s-%s-%s" % (self.args.prefix, c["name"], peer)
            cmd = [("--file-prefix=" + pp) if a.startswith("--file-prefix=") else a for a in cmd]
            runs.append((peer, cmd, pp, None))
        return runs

    def sink(self, prefix):
        try:
            return bench.sink_opackets(prefix)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def measure(self, label, cmd, prefix, json_path=None):
        """One program under callgrind: zero once forwarding, dump after the window."""
        self.seq += 1
        tag = "%02d-%s" % (self.seq, label)
        d = os.path.join(self.out, "instr", tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        # Start-up and shut-down run uninstrumented (several times faster under
        # valgrind); instrumentation is switched on once the sink transmits.
        # --fair-sched: without it the spinning lcore can hold valgrind's big lock
        # for seconds, so the telemetry thread starves and the start probe times out.
        vg = ["valgrind", "--tool=callgrind", "--fair-sched=yes", "--separate-threads=yes",
              "--instr-atstart=no", "--callgrind-out-file=%s/cg.%%p" % d]
        if self.args.dump_instr:
            vg.insert(2, "--dump-instr=yes")
        logf = os.path.join(d, "log")
        t_start = time.monotonic()
        res = dict(command=" ".join(vg[:5] + cmd))
        with open(logf, "w") as lf:
            lf.write(" ".join(vg + cmd) + "\n")
            lf.flush()
            p = subprocess.Popen(vg + cmd, stdin=subprocess.PIPE, stdout=lf,
                                 stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + self.args.start_timeout
                while True:
                    if p.poll() is not None:
                        raise RuntimeError("%s exited with %d before forwarding (see %s)" % (
                            label, p.returncode, logf))
                    n = self.sink(prefix)
                    if n:
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError("%s: no packet forwarded within %d s (see %s)" % (
                            label, self.args.start_timeout, logf))
                    time.sleep(0.2)
                t_fwd = time.monotonic()
                if self.args.arm and label == "pipefwd":
                    arm(prefix, self.args.arm)
                ctl(["--instr=on", str(p.pid)])
                time.sleep(self.args.warmup)
                a = self.sink(prefix)
                ctl(["-z", str(p.pid)])
                time.sleep(self.args.window)
                ctl(["-d", str(p.pid)])
                b = self.sink(prefix)
                ctl(["--instr=off", str(p.pid)])
                t_dump = time.monotonic()
            finally:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
                    try:
                        p.wait(timeout=120)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
        files = sorted(glob.glob(os.path.join(d, "cg.%d.1-*" % p.pid)))
        if not files:
            raise RuntimeError("%s: no callgrind dump in %s" % (label, d))
        th = forwarding_thread(files)
        rx = th["drivers"].get(RX_DRIVER)
        if not rx or not rx["calls"]:
            raise RuntimeError("%s: forwarding thread %s made no rx call" % (label, th["file"]))
        burst = RX_BURST.get(label, BURST)
        pkts = rx["calls"] * burst
        drv = sum(v["ir"] for v in th["drivers"].values())
        ir = th["ir"] - th["upkeep"]
        res.update(ir=ir, packets=pkts, total=round(ir / pkts, 1),
                   drivers=round(drv / pkts, 1), own=round((ir - drv) / pkts, 1),
                   upkeep_ir=th["upkeep"], upkeep=round(th["upkeep"] / pkts, 2),
                   driver_split={k: round(v["ir"] / pkts, 1) for k, v in th["drivers"].items()},
                   thread=os.path.relpath(th["file"], self.out),
                   top=top_functions(th["file"], pkts) if label == "pipefwd" else [],
                   wall_s=round(time.monotonic() - t_start, 1),
                   start_s=round(t_fwd - t_start, 1), stop_s=round(time.monotonic() - t_dump, 1))
        if a is not None and b is not None and b > a:
            res["sink_packets"] = b - a
            # The telemetry reads bracket the window (loosely: valgrind runs one
            # thread at a time), so the window cannot hold more packets than
            # the sink sent in between; more means the call count overcounts.
            # Far fewer (the reads are late by a second or two at most) means
            # the burst is larger than assumed.
            if pkts > (b - a) + 4 * burst or pkts < (b - a) / 2:
                res["count_error"] = "rx calls x %d = %d but the sink sent %d" % (
                    burst, pkts, b - a)
        if json_path:
            try:
                with open(json_path) as f:
                    st = json.load(f)
                res["totals"] = st["totals"]
                if st["totals"].get("unaccounted"):
                    res["warning"] = "pipefwd reports unaccounted packets"
                # pipefwd's own rx stage counters give the exact mean burst of the
                # whole run: the packet count above holds only if it is the burst.
                rx_st = st["stages"]["rx"]
                mean = rx_st["packets"] / rx_st["bursts"]
                if abs(mean - burst) > 0.01:
                    res["count_error"] = "pipefwd's rx bursts average %.2f packets, not %d" % (
                        mean, burst)
            except (OSError, ValueError, KeyError, ZeroDivisionError) as e:
                res["warning"] = "no stats json: %s" % e
        if not self.args.keep:
            for f in glob.glob(os.path.join(d, "cg.*")):
                if f != th["file"]:
                    os.unlink(f)
        if "count_error" in res:
            # A figure over a wrong packet count is no figure: fail, do not guess.
            raise RuntimeError("packet count: %s (%.1f instr per counted packet)" % (
                res["count_error"], res["total"]))
        return res


def ctl(argv):
    r = subprocess.run(["callgrind_control"] + argv, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or "OK" not in r.stdout:
        raise RuntimeError("callgrind_control %s failed: %s" % (" ".join(argv),
                                                                 (r.stdout + r.stderr).strip()))

def arm(prefix, command):
    """--arm: send one telemetry command (a trace, a drop capture) before the window."""
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipefwd-ctl")
    r = subprocess.run([tool, "--file-prefix", prefix, "--timeout", "60", "raw", command],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or '"error"' in r.stdout:
        raise RuntimeError("--arm %s: %s" % (command, (r.stdout + r.stderr).strip()))

# ------------------------------------------------------------------ cases ----


def acl_algorithm():
    """The ACL classify method the counts are taken with. pipefwd picks one by
    timing at start-up; under valgrind that timing is arbitrary and the pick
    (SSE or AVX2, ~30 instr/pkt apart) can change between runs, so the count
    pins the method real runs pick on a CPU with AVX2 (the only choice, in a
    topology, that the figure depends on)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        flags = ""
    return "avx2" if re.search(r"^flags\s*:.*\bavx2\b", flags, re.M) else "sse"


def pin_acl_algorithm(topo):
    """A copy of bench.py's topology with `algorithm:` set on every acl stage
    that leaves it to the start-up measurement."""
    with open(topo) as f:
        text = f.read()
    pinned = re.sub(r"\{ type: acl, (?![^}]*algorithm:)", "{ type: acl, algorithm: %s, "
                    % acl_algorithm(), text)
    if pinned == text:
        return topo
    path = topo[:-len(".yaml")] + "-instr.yaml"
    with open(path, "w") as f:
        f.write(pinned)
    return path


def selected(args, gate=False):
    only = set(args.only.split(",")) if args.only else None
    if gate:
        return [(n, []) for n in GATE if only is None or n in only]
    out = []
    for name, peers in CASES:
        if only is not None and name not in only:
            continue
        out.append((name, [] if args.no_peers else peers))
    return out


def bench_case(name):
    return next(c for c in bench.CASES if c["name"] == name)


def run_cases(args, root, cases):
    r = Runner(args, root)
    rows = []
    for name, peers in cases:
        c = bench_case(name)
        row = dict(case=name, title=c["title"], traffic=c["traffic"], tables=c["tables"],
                   peers={})
        try:
            runs = r.commands(c, peers)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            row["error"] = str(e)
            rows.append(row)
            log("instr: %s: %s" % (name, e))
            continue
        for label, cmd, prefix, js in runs:
            try:
                res = r.measure(label, cmd, prefix, js)
            except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                res = dict(error=str(e))
            if label == "pipefwd":
                row["pipefwd"] = res
            else:
                row["peers"][label] = res
            log("instr: %-8s %-12s %s" % (name, label, fmt_res(res)))
        rows.append(row)
    return rows


def fmt_res(res):
    if "error" in res:
        return "FAILED: " + res["error"]
    s = "%7.1f instr/pkt (own %.1f, drivers %.1f) over %d packets, %s s (start %s, stop %s)" % (
        res["total"], res["own"], res["drivers"], res["packets"], res["wall_s"], res["start_s"],
        res["stop_s"])
    return s + (" WARNING: " + res["warning"] if res.get("warning") else "")

# ---------------------------------------------------------- report / gate ----


def tools_missing():
    return [t for t in ("valgrind", "callgrind_control") if shutil.which(t) is None]


def cell(res):
    if not res or "total" not in res:
        return "failed" if res else "-"
    return "%.1f (%.1f)" % (res["total"], res["own"])


def report(res, doc):
    """The "Instructions per packet" section of docs/benchmarks.md, in place."""
    L = ["## Instructions per packet", "",
         "Measured by `make bench-instr` (scripts/bench_instr.py) on %s at commit `%s`, "
         "%s; raw numbers in `build/bench/instr.json`." % (
             res["date"], res["commit"], res["valgrind"]), "",
         "Instructions the forwarding lcore executes per packet under callgrind, fused layout, "
         "the `make bench` traffic (64-byte UDP, 4096 flows) from `net_pcap` `infinite_rx` into "
         "`net_null`. *total* counts everything that lcore runs while forwarding but its "
         "clock-driven upkeep (see below); *own* is total "
         "minus the two vdev drivers (the inclusive cost of the calls into net_pcap's rx and "
         "net_null's tx, the same for every program: %s). Ratio = pipefwd total / peer total."
         % res.get("driver_note", "see instr.json"), ""]
    L.append("| case | pipefwd total (own) | peer | peer total (own) | ratio |")
    L.append("|---|---|---|---|---|")
    for r in res["cases"]:
        pf = r.get("pipefwd")
        peers = list(r["peers"].items()) or [(None, None)]
        for i, (pn, pr) in enumerate(peers):
            ratio = "-"
            if pf and pr and "total" in pf and "total" in pr:
                ratio = "%.2fx" % (pf["total"] / pr["total"])
            L.append("| %s | %s | %s | %s | %s |" % (
                r["title"] if i == 0 else "", cell(pf) if i == 0 else "",
                pn or "(no peer)", cell(pr) if pn else "-", ratio))
    L += targets(res)
    L += ["", "How it is measured, and why the figure repeats (+-0.5 % run to run for the "
          "same binary; valgrind counts instructions, so machine load changes only the wall "
          "time):", "",
          "- Each program runs under `valgrind --tool=callgrind --separate-threads=yes "
          "--instr-atstart=no` (one output file per thread, nothing counted yet). Once the "
          "sink's `opackets` (telemetry) moves, `callgrind_control --instr=on` starts "
          "counting, `-z` zeroes the counters after a %g s warm-up and `-d` dumps them after "
          "a %g s window. Start-up, table loading and shut-down (where a worker spins idle "
          "for as long as the main thread takes, which depends on load) stay outside the "
          "window, and run uninstrumented, several times faster." % (res["warmup_s"],
                                                                     res["window_s"]),
          "- The forwarding lcore is the thread with the most instructions in the dump.",
          "- Repeatability, checked when this was written: six runs of each gate case at "
          "load averages 11 to 14 on the 2 CPUs gave the same figure within 0.1 instr/pkt "
          "(0.02 %), with windows from 230k to 1.3M packets.",
          "- Packets in the window = calls into net_pcap's rx burst function x the burst: with "
          "`infinite_rx` every call fills the burst. A deterministic count (the programs' own "
          "counters are read over telemetry at moments the window only brackets); the sink's "
          "`opackets` read before the zero and after the dump bracket it (a count above "
          "the bracket is reported).",
          "- Work done by the clock rather than per packet is over-represented under "
          "valgrind (a millisecond is ~150 packets there, ~10k natively) and varies with "
          "load, so pipefwd's upkeep (the inclusive cost of calls into functions named "
          "`*housekeep*`, run about once a millisecond) is counted apart (`upkeep` in "
          "instr.json) and left out of the figure; l2fib's aging there came to 1.6-2.6 "
          "instr/pkt when this was written. What remains by the clock (the lcore loop's "
          "timer test, l3fwd's inline 100 us drain check) is a few instructions per "
          "millisecond, under 0.1 %.",
          "- The ACL classify method: pipefwd picks it by timing at start-up, which under "
          "valgrind is arbitrary (the pick could change between runs and move the figure by "
          "hundreds of instructions), so the count pins `algorithm: avx2` (`sse` on a CPU "
          "without AVX2) in the topology's acl stage: the widest method valgrind runs (it "
          "hides AVX-512, which real runs here pick; docs/stages/acl.md); "
          "`make bench` leaves the pick to the machine.",
          "- Peers: dpdk-testpmd io and mac forwarding, DPDK's l3fwd (LPM, ACL) and, where "
          "scripts/bench.py defines it, l3fwd-graph, built as `make bench` builds them into "
          "build/bench/peers/, on the same vdevs, traffic and tables as the wall-clock tables "
          "above. l3fwd-graph's rx node asks for bursts of 256, the others 32.",
          "- Where the instructions go: instr.json lists pipefwd's largest inclusive costs "
          "per packet (`top`); the forwarding thread's file stays in build/bench/instr/ "
          "(`thread`) for `callgrind_annotate --inclusive=yes` (for line numbers and the "
          "same figure as the release build: `meson setup build-cg -Dbuildtype=debugoptimized "
          "-Doptimization=3 -Db_ndebug=true`; plain debugoptimized keeps the debug-build "
          "checks and counts more; `--keep` keeps every thread's file). Another build, before and after a change: `scripts/bench_instr.py OTHER_BUILD "
          "--no-peers --no-report` writes OTHER_BUILD/bench/instr.json.", "",
          "The gate: `make test` runs `instr_gate` (suite `perf`): pass-through, LPM 1k, ACL 100, "
          "IPv6 LPM 1k and l2fib 1k, pipefwd only, against `test/perf/instr_baseline.json` "
          "(about 20 s a case on an idle machine, several times that under load); it fails when a "
          "case costs more than %.0f %% above its baseline. A change that must cost more "
          "re-records the baseline in the same commit (`make bench-instr-baseline`) and says "
          "why in the commit message. `make bench-instr` prints a reminder when a case is "
          "more than %.0f %% below it." % (TOLERANCE_PCT, TOLERANCE_PCT), "",
          "The command (`make bench-instr` runs it), then each "
          "program as it ran (topologies, tables and traffic are scripts/bench.py's, "
          "generated under build/bench/):", "",
          "```", "/usr/bin/python3 " + res["command"], "```"]
    for r in res["cases"]:
        for label, rr in [("pipefwd", r.get("pipefwd"))] + list(r["peers"].items()):
            if rr and rr.get("command"):
                L.append("")
                L.append("`%s`, %s: `%s`" % (r["case"], label, shorten(rr["command"])))
    block = BEGIN + "\n" + "\n".join(L) + "\n" + END
    src = doc if os.path.exists(doc) else DOC
    text = open(src).read() if os.path.exists(src) else "# Benchmarks\n"
    # The end marker that closes *this* block: the first one after the begin
    # marker (an end marker earlier in the file must not cut the section short).
    b = text.find(BEGIN)
    e = text.find(END, b) if b >= 0 else -1
    if b >= 0 and e >= 0:
        text = text[:b] + block + text[e + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    os.makedirs(os.path.dirname(doc), exist_ok=True)
    with open(doc, "w") as f:
        f.write(text)
    log("instr: wrote %s%s" % (show(doc), "" if doc == DOC else " (docs/ unchanged: "
                               "--write-report, make bench-instr WRITE_REPORT=1, rewrites it)"))


def targets(res):
    """Issue 12's (and issue 14's IPv6) instruction targets against this run."""
    by = {r["case"]: r for r in res["cases"]}

    def tot(case, peer=None):
        r = by.get(case, {})
        x = r.get("peers", {}).get(peer) if peer else r.get("pipefwd")
        return x.get("total") if x else None

    rows = []
    for title, goal, case, peer, limit in (
            ("pass-through vs testpmd mac", "<= 1.10x", "pass", "testpmd-mac", 1.10),
            ("LPM 1k routes vs l3fwd LPM", "<= 1.10x", "l3-1k", "l3fwd-lpm", 1.10),
            ("ACL 100 rules vs l3fwd ACL", "<= 1.00x", "acl-100", "l3fwd-acl", 1.00),
            ("IPv6 1k routes vs l3fwd LPM6 (issue 14)", "<= 1.10x", "l3v6-1k", "l3fwd-lpm",
             1.10)):
        a, b = tot(case), tot(case, peer)
        if a and b:
            rows.append((title, goal, "%.2fx" % (a / b), a / b <= limit))
    if tot("l2-1k"):
        rows.append(("l2fib 1k MACs", "<= 450", "%.1f" % tot("l2-1k"), tot("l2-1k") <= 450))
    if tot("l2-1k") and tot("l2-1M"):
        q = tot("l2-1M") / tot("l2-1k")
        rows.append(("l2fib 1M MACs vs its 1k", "<= 1.3x", "%.2fx" % q, q <= 1.3))
    if not rows:
        return []
    out = ["", "Targets (issues 12 and 14), instructions per packet, totals:", "",
           "| figure | target | measured | |", "|---|---|---|---|"]
    out += ["| %s | %s | %s | %s |" % (t, g, m, "met" if ok else "not met")
            for t, g, m, ok in rows]
    return out


def shorten(cmd):
    return cmd.replace(ROOT + "/", "")


def show(path):
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + "/") else path


def build_id(build):
    """What the counts depend on besides the source: the build type, the
    compiler's -march=native (pipefwd is built with it) and DPDK, whose ACL
    and hash code pick their SIMD paths from the CPU at run time."""
    ident = dict(dpdk=bench.machine().get("dpdk"))
    try:
        with open(os.path.join(build, "meson-info", "intro-buildoptions.json")) as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
        ident["buildtype"] = opts.get("buildtype")
        ident["b_ndebug"] = opts.get("b_ndebug")
    except (OSError, ValueError, KeyError):
        pass
    try:
        out = subprocess.run(["cc", "-march=native", "-Q", "--help=target"], capture_output=True,
                             text=True).stdout
        m = re.search(r"^\s+-march=\s+(\S+)", out, re.M)
        ident["march"] = m.group(1) if m else None
    except OSError:
        pass
    return ident


def load_baseline(path):
    with open(path) as f:
        return json.load(f)


def gate_applies(args):
    """None, or why the baseline does not describe this build and machine."""
    want = load_baseline(args.gate).get("build", {})
    have = build_id(args.build)
    diff = ["%s %s (baseline %s)" % (k, have.get(k), v) for k, v in want.items()
            if have.get(k) != v]
    return "; ".join(diff) if diff else None


def gate(args, rows):
    base = load_baseline(args.gate)
    over, failed = 0, 0
    log("\n%-10s %10s %10s %8s" % ("case", "baseline", "now", "change"))
    for r in rows:
        pf = r.get("pipefwd") or {}
        b = base["cases"].get(r["case"], {}).get("total")
        if "total" not in pf:
            log("%-10s %10s %10s   FAILED: %s" % (r["case"], b, "-", r.get("error") or
                                                    pf.get("error", "?")))
            failed += 1
            continue
        if b is None:
            log("%-10s %10s %10.1f   NOT IN THE BASELINE" % (r["case"], "-", pf["total"]))
            over += 1
            continue
        ch = 100.0 * (pf["total"] - b) / b
        flag = ""
        if ch > TOLERANCE_PCT:
            flag = "  MORE THAN %.0f%% OVER BASELINE" % TOLERANCE_PCT
            over += 1
        elif ch < -TOLERANCE_PCT:
            flag = "  (cheaper: re-record the baseline to keep the gain)"
        log("%-10s %10.1f %10.1f %+7.1f%%%s" % (r["case"], b, pf["total"], ch, flag))
    if failed:
        log("\ninstr gate: %d case(s) could not be measured (logs under the run's temp dir with "
            "--keep; make bench-instr keeps them in build/bench/instr/)." % failed)
    if over:
        log("\ninstr gate: %d case(s) over the baseline. If the extra instructions are intended, "
            "re-record the baseline in the same commit and say why in its message:\n"
            "    %s\n"
            "Where they go: make bench-instr, then callgrind_annotate --inclusive=yes "
            "build/bench/instr/*-pipefwd/cg.*" % (over, rerecord(args.gate)))
    if failed or over:
        return 1
    log("instr gate: every case within %.0f%% of %s" % (TOLERANCE_PCT, show(args.gate)))
    return 0


def rerecord(path):
    if os.path.abspath(path) == BASELINE:
        return "make bench-instr-baseline      (writes %s)" % show(BASELINE)
    return "scripts/bench_instr.py BUILD --write-baseline %s" % show(path)


def write_baseline(path, rows, res):
    cases = {}
    for r in rows:
        pf = r.get("pipefwd") or {}
        if "total" not in pf:
            sys.exit("instr: %s failed (%s); baseline not written" % (
                r["case"], r.get("error") or pf.get("error")))
        cases[r["case"]] = dict(total=pf["total"], own=pf["own"], title=r["title"])
    with open(path + ".tmp", "w") as f:
        json.dump(dict(commit=res["commit"], date=res["date"], valgrind=res["valgrind"],
                       build=build_id(res["build"]),
                       tolerance_pct=TOLERANCE_PCT,
                       note="pipefwd instructions per packet, fused; written by "
                            "make bench-instr-baseline", cases=cases), f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
    log("instr: wrote %s" % show(path))


def main():
    # Benchmarks measure polling lcores, as the peers poll: no idle sleep
    # (runtime.idle_sleep_us) inherited from a test harness's environment.
    os.environ.pop("PIPEFWD_IDLE_SLEEP_US", None)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--only", help="comma-separated case names (%s)" % ",".join(
        n for n, _ in CASES))
    ap.add_argument("--no-peers", action="store_true", help="pipefwd only")
    ap.add_argument("--no-report", action="store_true", help="write no report section at all")
    ap.add_argument("--write-report", action="store_true", help="rewrite the section in the "
                    "tracked docs/benchmarks.md (default: BUILD/bench/report/benchmarks.md)")
    ap.add_argument("--gate", metavar="BASELINE", help="pipefwd, the gate cases, against a "
                    "baseline file; exit 1 if any grows more than %.0f%%%%" % TOLERANCE_PCT)
    ap.add_argument("--write-baseline", metavar="FILE", help="measure the gate cases and "
                    "write them as the baseline")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds after the first packet")
    ap.add_argument("--window", type=float, default=4.0, help="seconds counted")
    ap.add_argument("--start-timeout", type=int, default=240)
    ap.add_argument("--prefix", default=os.environ.get("PF_INSTR_PREFIX", "instr%d" % os.getpid()),
                    help="DPDK --file-prefix stem")
    ap.add_argument("--dump-instr", action="store_true", help="per-instruction counts in the "
                    "kept dump (callgrind_annotate --auto=yes on a -g build shows them by line)")
    ap.add_argument("--keep", action="store_true", help="keep every thread's callgrind file")
    ap.add_argument("--arm", metavar="COMMAND", help="telemetry command sent to pipefwd once it "
                    "forwards, before the window (e.g. a drop capture, to measure the armed "
                    "one-packet-at-a-time path; docs/stats.md)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the docs section from "
                    "BUILD/bench/instr.json without running anything")
    args = ap.parse_args()
    if args.report_only:
        out = os.path.join(os.path.abspath(args.build), "bench")
        with open(os.path.join(out, "instr.json")) as f:
            report(json.load(f), report_doc(out, args.write_report))
        return 0
    args.build = os.path.abspath(args.build)
    missing = tools_missing()
    if missing:
        msg = "instr: %s missing (scripts/deps.sh installs valgrind)" % ", ".join(missing)
        if args.gate:
            print(msg + "; gate skipped")
            return 77
        sys.exit(msg)
    if not os.access(os.path.join(args.build, "app", "pipefwd"), os.X_OK):
        sys.exit("instr: %s/app/pipefwd not built (make build)" % args.build)
    if args.gate:
        why = gate_applies(args)
        if why:
            # Another CPU or build type executes other instructions: the
            # figures are not comparable, and a false alarm teaches nothing.
            print("instr: baseline %s was recorded for another build or machine: %s.\n"
                  "Gate skipped; re-record it here with make bench-instr-baseline to use it."
                  % (show(args.gate), why))
            return 77
    t0 = time.monotonic()
    tmp = None
    if args.gate or args.write_baseline:
        tmp = tempfile.mkdtemp(prefix="pf-instr-")
        root = tmp
        cases = selected(args, gate=True)
    else:
        root = args.build
        cases = selected(args)
    try:
        rows = run_cases(args, root, cases)
    finally:
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            log("instr: inputs, logs and callgrind files kept in %s" % tmp)
    vg = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    res = dict(date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               commit=bench.git_commit(os.path.dirname(args.build)), valgrind=vg,
               build=args.build, warmup_s=args.warmup, window_s=args.window, burst=BURST,
               command=" ".join(["scripts/bench_instr.py"] + sys.argv[1:]).replace(
                   ROOT + "/", ""),
               elapsed_s=round(time.monotonic() - t0, 1), cases=rows)
    drv = [r["pipefwd"]["driver_split"] for r in rows if "driver_split" in r.get("pipefwd", {})]
    if drv:
        res["driver_note"] = ", ".join("%s %.1f" % (k.replace("librte_net_", ""), v)
                                       for k, v in sorted(drv[0].items()))
    log("instr: %d case(s) in %.0f s" % (len(rows), res["elapsed_s"]))
    if args.gate:
        return gate(args, rows)
    if args.write_baseline:
        write_baseline(args.write_baseline, rows, res)
        return 0
    with open(os.path.join(root, "bench", "instr.json"), "w") as f:
        json.dump(res, f, indent=1)
    log("instr: wrote %s" % show(os.path.join(root, "bench", "instr.json")))
    if os.path.exists(BASELINE):
        base = load_baseline(BASELINE)["cases"]
        for r in rows:
            b, pf = base.get(r["case"], {}).get("total"), r.get("pipefwd") or {}
            if b and "total" in pf and abs(pf["total"] - b) > b * TOLERANCE_PCT / 100:
                log("instr: %s %.1f against baseline %.1f: re-record with make "
                    "bench-instr-baseline if intended" % (r["case"], pf["total"], b))
    if args.only or args.no_peers:
        log("instr: a partial run (--only, --no-peers) writes no report section")
    elif not args.no_report:
        report(res, report_doc(os.path.join(root, "bench"), args.write_report))
    failed = [r["case"] for r in rows if "total" not in (r.get("pipefwd") or {})]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
