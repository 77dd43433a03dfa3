# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the fault tests (test/fault/*.py): frames with per-flow sequence
numbers, pcap files, running pipefwd in the background, reading its stats.

Every fault test builds its own topology in a scratch directory, starts
pipefwd with a unique --file-prefix, injects the fault, and then checks the
counters exactly (what can be predicted) or for consistency (rx, rings and
totals adding up), that forwarding went on, that nothing is unaccounted and
that the mempool is back to zero after stop.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_PIPEFWD = os.path.join(ROOT, "build", "app", "pipefwd")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pcaplib  # noqa: E402
from pcaplib import write_pcap  # noqa: E402,F401
EAL = '[--no-huge, -m, "512", --no-pci, --no-telemetry, --log-level=lib.eal:warning]'

HDR = struct.Struct("!II")      # flow, seq at UDP payload offset 0 (frame offset 42)


def frame(flow, seq, size=64):
    """Ethernet/IPv4/UDP frame of @flow carrying @seq (valid checksum), @size bytes."""
    payload = HDR.pack(flow, seq) + b"f" * max(0, size - 42 - HDR.size)
    udp = struct.pack("!HHHH", 20000 + flow, 7, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0, 64, 17,
                               0, bytes([10, 0, flow >> 8 & 0xFF, flow & 0xFF]),
                               bytes([10, 9, 9, 9])))
    s = sum(struct.unpack("!10H", ip))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = struct.pack("!H", ~s & 0xFFFF)
    return bytes.fromhex("02000000000b02000000000a0800") + bytes(ip) + udp


def flow_seq(data):
    return HDR.unpack(data[42:50])


def flows_input(path, total, flows=8, size=64):
    """Write @total frames round-robin over @flows; returns the list of (flow, seq)."""
    keys = [(i % flows, i // flows) for i in range(total)]
    write_pcap(path, (frame(fl, sq, size) for fl, sq in keys))
    return keys


def read_pcap(path):
    """Frames of a pcap; raises ValueError if any record is cut short (incomplete file)."""
    return pcaplib.read_pcap(path, strict=True)


def check_flow_order(frames, errors, label="output"):
    """Per-flow sequence numbers strictly increase; returns {flow: [seq...]}."""
    seqs = {}
    for d in frames:
        fl, sq = flow_seq(d)
        prev = seqs.setdefault(fl, [])
        if prev and sq <= prev[-1]:
            errors.append(f"{label}: flow {fl} seq {sq} after {prev[-1]} (reordered/duplicated)")
            break
        prev.append(sq)
    return seqs


class Scratch:
    """A temp dir, removed unless the test failed."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"fault-{name}-")

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def done(self, ok):
        if ok:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print(f"kept {self.dir}")


class Pipefwd:
    """pipefwd running in the background; stderr is followed line by line."""

    def __init__(self, pipefwd, topo, stats, args=(), env=None, prefix="fault", wrap=()):
        """@wrap: a command that execs pipefwd (as `prlimit --sigpending=0`)."""
        self.prefix = f"robust_{prefix}_{os.getpid()}"
        cmd = [*wrap, pipefwd, "-q", "-j", stats, *args, topo, "--",
               f"--file-prefix={self.prefix}"]
        self.t0 = time.time()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, **(env or {})})
        self.log = []
        self.cond = threading.Condition()
        self.follower = threading.Thread(target=self._follow, daemon=True)
        self.follower.start()

    def _follow(self):
        for line in self.proc.stderr:
            with self.cond:
                self.log.append(line)
                self.cond.notify_all()

    def wait_log(self, text, timeout=10.0, start=0):
        """Wait for a stderr line containing @text (from line @start); returns it or None."""
        end = time.time() + timeout
        with self.cond:
            while True:
                for line in self.log[start:]:
                    if text in line:
                        return line
                left = end - time.time()
                if left <= 0 or self.proc.poll() is not None and not self.follower.is_alive():
                    return None
                self.cond.wait(min(left, 0.05))

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            self.log.append(f"(killed after {timeout} s)\n")
        self.follower.join(timeout=5)
        self.proc.stdout.close()
        self.cleanup_runtime_dir()
        return rc

    def stderr(self):
        return "".join(self.log)

    def cleanup_runtime_dir(self):
        shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)


def sigterm_within(pf, errors, limit=10.0):
    """SIGTERM @pf: it must exit 0 within @limit s (killed after 30). Returns the exit status."""
    t0 = time.monotonic()
    pf.signal(signal.SIGTERM)
    rc = pf.wait(timeout=30)
    if rc != 0 or time.monotonic() - t0 > limit:
        errors.append(f"SIGTERM: exit {rc} after {time.monotonic() - t0:.1f} s")
    return rc


def load_stats(path, errors):
    if not os.path.exists(path):
        errors.append("no stats JSON written")
        return None
    with open(path) as f:
        return json.load(f)


def check_common(st, errors, extra_drops=None):
    """Nothing unaccounted, nothing in flight, mempool back to zero."""
    tot = st["totals"]
    if tot["unaccounted"] != 0:
        errors.append(f"unaccounted packets: {tot}")
    if tot["in_flight"] != 0:
        errors.append(f"packets still in flight after stop: {tot}")
    if st["mbufs_in_use_after_stop"] != 0:
        errors.append(f"mbufs in use after stop: {st['mbufs_in_use_after_stop']}")


def expect_eq(errors, what, got, want):
    if got != want:
        errors.append(f"{what} = {got}, expected {want}")


def finish(name, scratch, errors, summary):
    for e in errors[:20]:
        print("FAIL:", e)
    print(f"{name}: {'PASS' if not errors else 'FAIL'}: {summary}")
    scratch.done(not errors)
    sys.exit(1 if errors else 0)


STALL_TOPO = """# {name} fault test (generated)
eal: {eal}
ports:
  p0: {{ device: "net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/p0.pcap" }}
  p1: {{ device: "net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/out.pcap" }}
stages:
  rx: {{ type: rx, ports: [p0], pace_pps: {pps}, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: slow }}
  slow: {{ type: delay, us: {us}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 1024, burst: 32 }}
  xc->slow: {{ size: {ring} }}
{runtime}lcores:
  1: [rx, xc]
  2: [slow, tx]
"""


def run_stall(pipefwd, name, n, ring, pps, stall_us, env=None, lossless=False, onset=None,
              stall_s=0.5):
    """rx (paced @pps) -> xc -> [ring of @ring] -> slow (delay stage, @stall_us
    per burst) -> tx -> p1, on @n frames of flows_input(). Once the stall has
    done its work -- pipefwd logs the capacity drop @onset (e.g. "ring xc->slow
    full"), or @stall_s seconds passed when @onset is None -- a reload sets
    `us: 0` (the stall ends). Waiting for the log line, not a fixed time, keeps
    the test true on a busy machine, where the paced input may not fill
    anything in half a second. With @lossless the topology sets
    runtime.backpressure. Returns (scratch, errors, keys of the input frames,
    the stopped Pipefwd, its stats or None)."""
    sc = Scratch(name)
    errors = []
    keys = flows_input(sc.path("in.pcap"), n)
    write_pcap(sc.path("empty.pcap"), [])
    topo = sc.path("topology.yaml")

    def write_topo(us):
        with open(topo + ".tmp", "w") as f:
            f.write(STALL_TOPO.format(name=name, eal=EAL, d=sc.dir, pps=pps, us=us, ring=ring,
                                      runtime="runtime: { backpressure: true }\n"
                                      if lossless else ""))
        os.replace(topo + ".tmp", topo)

    write_topo(stall_us)
    stats = sc.path("stats.json")
    pf = Pipefwd(pipefwd, topo, stats, args=["-i", "300"], prefix=name, env=env)
    if pf.wait_log("running", timeout=30) is None:
        errors.append("pipefwd did not start")
    else:
        if onset is None:
            pf.wait_log("no such line", timeout=stall_s)   # the stall phase
        elif pf.wait_log(onset, timeout=60) is None:
            errors.append(f"no log line '{onset}' within 60 s: the stall never filled it")
        write_topo(0)
        pf.signal(signal.SIGHUP)
        if pf.wait_log(" applied in ", timeout=10) is None:
            errors.append("reload (us: 0) not applied")
    rc = pf.wait(timeout=60)
    if rc != 0:
        errors.append(f"pipefwd exited {rc}: {pf.stderr()[-2000:]}")
    return sc, errors, keys, pf, load_stats(stats, errors)


def check_recovery(keys, out, errors, what):
    """Recovery without restart, after a reload that ended a stall early in
    the stream: the second half of the input got through at the consumer's
    new speed. A consumer still stalled passes about 3 % of it (the delay
    stage's 32 frames per 20 ms against the paced input), a recovered one all
    of it -- unless the machine deschedules the consumer's lcore for longer
    than the ring or the pool lasts at the input's rate (about 160 ms). A
    loaded CI machine lost frames up to the very last (frame 79999 of 80000
    at 50 kpps, ring_full 5667 in all, each one counted) though the stall had
    ended early. So at most 5 % of the second half may be lost; the exact
    accounting of every loss is checked apart. Returns the index of the last
    frame lost, or -1."""
    delivered = {flow_seq(d) for d in out}
    half = len(keys) // 2
    lost = [i for i, k in enumerate(keys) if k not in delivered]
    late = sum(1 for i in lost if i >= half)
    if late * 20 > len(keys) - half:
        errors.append(f"{what}: {late} of the second half's {len(keys) - half} frames lost "
                      f"(last at frame {lost[-1]}): no recovery after the stall ended")
    return lost[-1] if lost else -1


def args_parser(doc):
    import argparse
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--pipefwd", default=DEFAULT_PIPEFWD)
    return ap


__all__ = ["frame", "flow_seq", "write_pcap", "flows_input", "read_pcap", "check_flow_order",
           "Scratch", "Pipefwd", "load_stats", "check_common", "expect_eq", "finish",
           "args_parser", "EAL", "signal", "run_stall", "check_recovery",
           "sigterm_within"]
