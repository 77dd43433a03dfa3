#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Stats socket tests: a real pipefwd (rx -> xconnect -> tx, net_pcap into
net_null) queried through DPDK telemetry with scripts/pipefwd-ctl.

  live:  infinite_rx replay; every command, relations that hold while packets
         flow, top, access modes, abusive clients (prom: test_prom.py).
  end:   a finite replay with bad checksums; once the pipeline is idle the
         counters read through the socket must add up exactly.

usage: test_stats.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import XC_TOPOLOGY, numbered_udp, write_pcap as pftest_write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
TAG = "stats_t%d" % os.getpid()
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def ipv4_udp(i, bad_csum=False):
    f = bytearray(numbered_udp(i))
    if bad_csum:
        f[14 + 11] ^= 1             # low byte of the IPv4 header checksum
    return bytes(f)


def write_pcap(path, frames):
    pftest_write_pcap(path, frames, stamp=lambda i: (1 + i // 1000, i % 1000))


TOPO = XC_TOPOLOGY


class Run:
    """One pipefwd process with its own file prefix."""

    def __init__(self, tmp, name, infinite, args, topo=TOPO, relative=False):
        self.prefix = "%s_%s" % (TAG, name)
        self.topo = os.path.join(tmp, name + ".yaml")
        self.json = os.path.join(tmp, name + ".json")
        with open(self.topo, "w") as f:
            f.write(topo.format(pcap=os.path.join(tmp, name + ".pcap"),
                                infinite=",infinite_rx=1" if infinite else ""))
        self.log = open(os.path.join(tmp, name + ".log"), "w")
        # relative: started in @tmp with a relative topology path (as people do)
        self.proc = subprocess.Popen([PIPEFWD, "-q", "-j", self.json] + args +
                                     [name + ".yaml" if relative else self.topo, "--",
                                      "--file-prefix=" + self.prefix],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=tmp if relative else None)
        self.rundir = "/var/run/dpdk/" + self.prefix if os.geteuid() == 0 else \
            os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", self.prefix)
        self.sock = os.path.join(self.rundir, "dpdk_telemetry.v2")

    def wait_ready(self, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            r = subprocess.run([CTL, "--socket", self.sock, "--json", "totals"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return True
            time.sleep(0.1)
        return False

    def ctl(self, *args, ok=True, cwd=None):
        r = subprocess.run([CTL, "--file-prefix", self.prefix] + list(args),
                           capture_output=True, text=True, timeout=30, cwd=cwd)
        if ok:
            check(r.returncode == 0, "pipefwd-ctl %s: rc %d: %s" % (" ".join(args),
                                                                     r.returncode, r.stderr))
        return r

    def q(self, *args):
        r = self.ctl("--json", *args)
        return json.loads(r.stdout) if r.returncode == 0 else {}

    def finish(self, timeout=30, interrupt=False):
        if interrupt and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        shutil.rmtree(self.rundir, ignore_errors=True)
        return rc


def telemetry_conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    s.recv(4096)
    return s


def proc_counts(pid):
    return len(os.listdir("/proc/%d/fd" % pid)), len(os.listdir("/proc/%d/task" % pid))


def thread_states(pid):
    """comm:wchan of each thread (to tell a stuck telemetry thread from a slow one)."""
    out = []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as c, \
                    open("/proc/%d/task/%s/wchan" % (pid, t)) as w:
                out.append("%s:%s" % (c.read().strip(), w.read().strip()))
        except OSError:
            pass
    return " ".join(sorted(out))


def worker_cpu(pid):
    """CPU seconds the forwarding lcores (EAL names them rte-worker-N) have used."""
    ticks = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as c:
                if not c.read().startswith(("rte-worker", "lcore-worker")):
                    continue
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])     # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def rx_per_cpu(conn, pid, secs, min_cpu=0.2, max_secs=10.0):
    """Packets received per CPU second of the forwarding lcores: what the data
    path does with the CPU it gets, which a busy machine does not change (a
    wall-clock rate measures the machine's load as much as pipefwd). Waits
    for @min_cpu CPU seconds (tick granularity), at most @max_secs."""
    def rx():
        conn.send(b"/pipefwd/totals")
        return json.loads(conn.recv(65536))["/pipefwd/totals"]["rx"]
    a, c0, t0 = rx(), worker_cpu(pid), time.monotonic()
    time.sleep(secs)
    while worker_cpu(pid) - c0 < min_cpu and time.monotonic() - t0 < max_secs:
        time.sleep(0.1)
    cpu = worker_cpu(pid) - c0
    return (rx() - a) / cpu if cpu > 0 else 0.0


# ---- live -------------------------------------------------------------------

def test_live(tmp):
    write_pcap(os.path.join(tmp, "live.pcap"), [ipv4_udp(i) for i in range(256)])
    run = Run(tmp, "live", True, ["-d", "600"])   # ended by SIGINT; long for a busy machine
    if not check(run.wait_ready(), "live: pipefwd did not serve stats"):
        run.proc.kill()
        run.finish()
        return
    # access: directory 0700, socket 0600, owned by us
    st_dir, st_sock = os.stat(run.rundir), os.lstat(run.sock)
    check(stat.S_IMODE(st_dir.st_mode) == 0o700, "runtime dir mode %o" % st_dir.st_mode)
    check(stat.S_ISSOCK(st_sock.st_mode) and stat.S_IMODE(st_sock.st_mode) == 0o600,
          "socket mode %o" % st_sock.st_mode)

    cfg = run.q("config")
    check(cfg.get("topology") == run.topo, "config.topology %r" % cfg.get("topology"))
    check(cfg.get("keys", {}).get("rings") == ["rx_to_xc", "xc_to_tx"], "config keys %r" % cfg)
    check(cfg.get("lcore_map") == {"1": "rx xc tx"}, "config lcore_map")
    check(abs(cfg.get("loaded_at", 0) - time.time()) < 120, "config.loaded_at")

    s1 = run.q("stages")
    time.sleep(0.3)
    rings = run.q("rings")
    lcores = run.q("lcores")
    ports = run.q("ports")
    totals = run.q("totals")
    s2 = run.q("stages")
    check(set(rings) == {"rx_to_xc", "xc_to_tx"}, "rings keys %r" % list(rings))
    for key, r in rings.items():
        check(r["used"] <= r["capacity"] < r["size"], "%s: used %d cap %d size %d" % (
            key, r["used"], r["capacity"], r["size"]))
        check(r["used"] <= r["hwm"] <= r["capacity"], "%s: used %d hwm %d" % (
            key, r["used"], r["hwm"]))
        check(r["dequeued"] <= r["enqueued"] + r["capacity"], "%s: deq > enq" % key)
        # Fused on one lcore: every edge goes direct, the rings stay unused.
        check(r["enqueued"] == 0 and r["direct"] > 0,
              "%s: a same-lcore edge went through its ring: %r" % (key, r))
        hist = r["hist"]
        check(list(hist)[0] == "le_0" and int(list(hist)[-1][3:]) >= r["capacity"],
              "%s: histogram buckets %r" % (key, list(hist)))
        # Occupancy is sampled on ring sends only: none on a direct edge.
        check(sum(hist.values()) == 0, "%s: histogram of an unused ring %r" % (key, hist))
    check(set(s1) == set(s2) == {"rx", "xc", "tx"}, "stages keys")
    for k in s1:
        a, b = s1[k], s2[k]
        for f in ("packets", "bursts", "cycles"):
            check(b[f] >= a[f], "stage %s: %s went down %d -> %d" % (k, f, a[f], b[f]))
        check(b["packets"] > a["packets"], "stage %s: no progress" % k)
        # Cycles are sampled (one pass in 16): after thousands of bursts some
        # were timed ((15/16)^1000 < 1e-28), and the estimate is a real cost.
        if b["bursts"] >= 1000:
            check(b["cycles"] > 0,
                  "stage %s: no cycles after %d bursts: %r" % (k, b["bursts"], b))
        check(b["dropped"] == sum(b["drops"].values()), "stage %s: dropped != sum" % k)
        check(1 <= b["avg_burst"] <= 256, "stage %s: avg_burst %d" % (k, b["avg_burst"]))
        check(b["lcore"] == 1, "stage %s lcore" % k)
    check(s2["rx"]["drops"].get("ip4_bad_checksum") == 0, "rx drops by reason listed")
    check("in_flight" in s2["tx"]["gauges"], "tx gauges")
    for key, lc in lcores.items():
        check(0 <= lc["busy_pct"] <= 100, "lcore %s busy %d" % (key, lc["busy_pct"]))
        check(lc["busy_cycles"] <= lc["total_cycles"], "lcore %s busy > total" % key)
        check(lc["stages"] == ["rx", "xc", "tx"], "lcore %s stages" % key)
    check(ports["p0"]["rx"] > 0 and ports["p1"]["tx"] > 0, "ports rx/tx %r" % ports)
    check(ports["p1"]["opackets"] >= ports["p1"]["tx"] - 64, "ports opackets")
    check(totals["rx"] >= totals["tx"] and totals["dropped"] == 0, "totals %r" % totals)

    # one item by name or key; unknown names fail
    one = run.q("rings", "rx->xc")
    check(list(one) == ["rx_to_xc"], "rings rx->xc -> %r" % list(one))
    check(list(run.q("stages", "xc")) == ["xc"], "stages xc")
    check(run.ctl("stages", "nope", ok=False).returncode == 1, "unknown stage must fail")
    for c in ("rings", "stages", "lcores", "ports", "config", "totals"):
        out = run.ctl(c).stdout
        check(len(out.splitlines()) >= 2, "table %s: %r" % (c, out))

    # top: two frames with rings, stages, lcores
    out = run.ctl("top", "--interval", "0.3", "--iterations", "2").stdout
    check(out.count("RING") == 2 and out.count("LCORE") == 2 and "rx->xc" in out and
          "Mpps" in out, "top output:\n" + out)
    m = re.findall(r"^rx\s+rx\s+1\s+([\d.]+)\s+([\d.]+)", out, re.M)
    check(len(m) == 2 and float(m[0][0]) > 0 and float(m[0][1]) > 0, "top stage rows %r" % m)

    # prom (stdout and --listen) under promtool: test/stats/test_prom.py

    # abusive clients: the data path must not notice
    mon = telemetry_conn(run.sock)   # DPDK serves 10 clients: keep a seat for measuring
    fds0, tasks0 = proc_counts(run.proc.pid)
    before = rx_per_cpu(mon, run.proc.pid, 0.5)
    stop = threading.Event()

    def vanishing():
        while not stop.is_set():      # ask, then leave before the reply is written
            try:
                s = telemetry_conn(run.sock)
                s.send(b"/pipefwd/stages")
                s.close()
            except OSError:
                pass

    slow = []
    for _ in range(4):                # ask and never read: the reply write blocks
        try:
            s = telemetry_conn(run.sock)
            s.setblocking(False)
            for _ in range(400):
                s.send(b"/pipefwd/stages")
        except (BlockingIOError, OSError):
            pass
        slow.append(s)
    s = telemetry_conn(run.sock)      # a 64 KiB request is cut at 1 KiB: null reply
    s.send(b"/pipefwd/stages," + b"x" * 65536)
    check(json.loads(s.recv(65536)) == {"/pipefwd/stages": None}, "oversize request")
    s.close()
    t = threading.Thread(target=vanishing)
    t.start()
    during = rx_per_cpu(mon, run.proc.pid, 1.0)
    stop.set()
    t.join()
    for s in slow:
        s.close()
    # Per CPU second of the forwarding lcores: a lock or a wait shared with
    # the telemetry threads would cut it; a machine busy with the clients'
    # own CPU use does not (the rate per wall second falls 4x at load 20).
    check(during > 0.3 * before, "forwarding slowed by clients: %.0f -> %.0f packets per "
          "forwarding CPU second" % (before, during))
    # The blocked clients' telemetry threads end once they see the closed
    # sockets (until then they hold seats of the 10). Each first answers what
    # its client had queued (up to 400 requests, replies failing with EPIPE):
    # on a loaded machine that takes seconds.
    end = time.monotonic() + 30
    while time.monotonic() < end and proc_counts(run.proc.pid) != (fds0, tasks0):
        time.sleep(0.1)
    check(proc_counts(run.proc.pid) == (fds0, tasks0), "fd/thread leak: %r -> %r %s" % (
        (fds0, tasks0), proc_counts(run.proc.pid), thread_states(run.proc.pid)))
    # Then a new client is served at once: timed on the socket itself
    # (starting a Python client can take seconds on a loaded machine).
    t0 = time.monotonic()
    try:
        s = telemetry_conn(run.sock)
        s.send(b"/pipefwd/totals")
        served = json.loads(s.recv(65536))["/pipefwd/totals"]
        s.close()
    except (OSError, ValueError) as e:
        served = {"error": str(e)}
    waited = time.monotonic() - t0
    check(served.get("rx", 0) > 0, "served after abuse: %r" % served)
    check(waited < 2, "next client waited %.2f s" % waited)
    check(run.q("totals").get("rx", 0) > 0, "pipefwd-ctl served after abuse")
    mon.close()
    print("live: rx %.2f Mpps before, %.2f Mpps with abusive clients" % (
        before / 1e6, during / 1e6), flush=True)

    # numeric arguments: finite numbers in range only (NaN passes a plain range check)
    conn = telemetry_conn(run.sock)
    for arg in ("nan", "NaN", "inf", "-inf", "1e999", "12abc", "-1", "100001", "0x"):
        conn.send(("/pipefwd/rebalance," + arg).encode())
        r = json.loads(conn.recv(65536))
        check(r.get("/pipefwd/rebalance") is None, "rebalance,%s accepted: %s" % (arg, r))
    conn.send(b"/pipefwd/rebalance,130")
    r = json.loads(conn.recv(65536)).get("/pipefwd/rebalance") or {}
    check(r.get("cross_cycles") == 130, "rebalance,130: %s" % r)
    conn.close()

    rc = run.finish(interrupt=True)
    check(rc == 0, "live: pipefwd exit %d" % rc)
    with open(run.json) as f:
        final = json.load(f)
    check(final["totals"]["unaccounted"] == 0, "live: unaccounted %r" % final["totals"])


# ---- operator's console: interval views, rebalance, top's printed frames --------

# rx, xc and tx on three lcores all pinned to CPU 0: they share a CPU, which
# pipefwd-ctl must warn about (and it keeps the test off the other CPU).
CONSOLE_TOPOLOGY = (XC_TOPOLOGY.replace('--no-pci]', '--no-pci, "--lcores=(0-3)@(0)"]')
                    .replace("  1: [rx, xc, tx]\n", "  1: [rx]\n  2: [xc]\n  3: [tx]\n") +
                    "rings:\n  default: {{ size: 4096, burst: 32 }}\n")


def test_console(tmp):
    write_pcap(os.path.join(tmp, "console.pcap"), [ipv4_udp(i) for i in range(256)])
    run = Run(tmp, "console", True, ["-d", "600"], topo=CONSOLE_TOPOLOGY, relative=True)
    if not check(run.wait_ready(), "console: pipefwd did not serve stats"):
        run.proc.kill()
        run.finish()
        return
    # bad arguments: a usage error (2), never a traceback
    for args in (["top", "--interval", "-1"], ["top", "--interval", "nan"],
                 ["top", "--interval", "inf"], ["top", "--iterations", "-2"],
                 ["stages", "--interval", "0"], ["rings", "--interval", "x"]):
        r = run.ctl(*args, ok=False)
        check(r.returncode == 2 and "Traceback" not in r.stderr and "error:" in r.stderr,
              "ctl %s: rc %d %r" % (" ".join(args), r.returncode, r.stderr))

    # interval views: rates over the interval, from two samples
    r = run.ctl("stages", "--interval", "0.5")
    m = re.match(r"rates over the last ([\d.]+) s\n", r.stdout)
    check(m is not None and 0.45 <= float(m.group(1)) < 3, "stages --interval: %r" % r.stdout)
    rows = {l.split()[0]: l.split() for l in r.stdout.splitlines()[2:] if l.strip()}
    check(set(rows) == {"rx", "xc", "tx"} and float(rows["xc"][3]) > 0,
          "stages --interval rows %r" % rows)
    j = json.loads(run.ctl("--json", "stages", "--interval", "0.3").stdout)
    check(j["after"]["xc"]["packets"] > j["before"]["xc"]["packets"] and
          0.25 <= j["interval_s"] < 3, "stages --interval --json %r" % j.get("interval_s"))
    r = run.ctl("rings", "--interval", "0.3")
    check("rx->xc" in r.stdout and "in Mpps" in r.stdout, "rings --interval: %r" % r.stdout)
    r = run.ctl("lcores", "--interval", "0.3")
    check(re.search(r"^2\s+[\d.]+%", r.stdout, re.M) is not None, "lcores --interval %r" % r.stdout)
    check("lcores 1,2,3 share 1 CPU (0)" in r.stderr, "no CPU sharing warning: %r" % r.stderr)
    # one frame, one interval: the ring into xc and xc itself count the same packets
    out = run.ctl("top", "--interval", "0.5", "--iterations", "1").stdout
    ring = re.search(r"^rx->xc\s+\[.*?\]\s+\d+/\d+\s+\d+\s+([\d.]+)\s+([\d.]+)", out, re.M)
    xc = re.search(r"^xc\s+xconnect\s+2\s+([\d.]+)", out, re.M)
    if check(ring is not None and xc is not None, "top frame:\n" + out):
        a, b = float(ring.group(2)), float(xc.group(1))
        check(b > 0 and abs(a - b) <= 0.2 * b, "top: ring out %.3f vs stage %.3f Mpps" % (a, b))
    # rebalance from another directory: the relative topology path is resolved
    r = run.ctl("rebalance", "--suggest", cwd="/")
    check(r.returncode == 0 and "Traceback" not in r.stderr and
          ("already has this map" in r.stdout or run.topo in r.stdout),
          "rebalance from /: %d %r %r" % (r.returncode, r.stdout, r.stderr))
    # top on a terminal (keys, sizes, pipefwd stopping): test/console/test_top.py
    rc = run.finish(interrupt=True)
    check(rc == 0, "console: pipefwd exit %d" % rc)


# ---- end of traffic ------------------------------------------------------------

def test_end(tmp):
    n, bad = 2000, [i for i in range(2000) if i % 25 == 3]
    write_pcap(os.path.join(tmp, "end.pcap"), [ipv4_udp(i, i in bad) for i in range(n)])
    run = Run(tmp, "end", False, ["-i", "30000"])
    if not check(run.wait_ready(), "end: pipefwd did not serve stats"):
        run.proc.kill()
        run.finish()
        return
    prev = None
    end = time.monotonic() + 10
    while time.monotonic() < end:   # idle: rx stopped and nothing in flight, twice
        t = run.q("totals")
        t.pop("tsc", None)
        if t.get("rx") == n and t.get("in_flight") == 0 and t == prev:
            break
        prev = t
        time.sleep(0.2)
    totals, stages, rings, ports = (run.q("totals"), run.q("stages"), run.q("rings"),
                                    run.q("ports"))
    check(totals["rx"] == n and totals["unaccounted"] == 0 and totals["in_flight"] == 0,
          "end totals %r" % totals)
    check(totals["dropped"] == len(bad) and totals["tx"] == n - len(bad), "end rx/tx/drops")
    for key, r in rings.items():
        check(r["used"] == 0 and r["enqueued"] == r["dequeued"], "end ring %s %r" % (key, r))
    edge = {k: r["enqueued"] + r["direct"] for k, r in rings.items()}
    out_of = {"rx": edge["rx_to_xc"], "xc": edge["xc_to_tx"], "tx": ports["p1"]["tx"]}
    into = {"rx": ports["p0"]["rx"], "xc": rings["rx_to_xc"]["dequeued"] + rings["rx_to_xc"]["direct"],
            "tx": rings["xc_to_tx"]["dequeued"] + rings["xc_to_tx"]["direct"]}
    for k, s in stages.items():
        check(s["packets"] == into[k], "stage %s: packets %d, input %d" % (
            k, s["packets"], into[k]))
        check(s["packets"] == out_of[k] + s["dropped"] + s["gauges"].get("in_flight", 0),
              "stage %s: in %d != out %d + dropped %d" % (k, s["packets"], out_of[k],
                                                          s["dropped"]))
        check(s["packets"] == sum(s["edges"].values()), "stage %s: edges" % k)
    check(stages["rx"]["drops"]["ip4_bad_checksum"] == len(bad), "rx bad checksum count")
    check(stages["rx"]["edges"]["drop"] == len(bad), "rx drop edge")
    rc = run.finish(interrupt=True)
    check(rc == 0, "end: pipefwd exit %d" % rc)


def main():
    tmp = tempfile.mkdtemp(prefix="pf_stats_")
    try:
        test_live(tmp)
        test_end(tmp)
        test_console(tmp)
    finally:
        if not FAILS:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("logs kept in " + tmp)
    print("stats: %s" % ("ok" if not FAILS else "%d failures" % len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
