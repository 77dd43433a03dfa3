#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live capture tests: pipefwd-ctl capture against a running pipefwd.

rx -> xc (xconnect p0->p1) -> tx on one lcore; p0 replays 1000 distinct
frames forever (net_pcap infinite_rx=1), p1 is net_null. Captures of an edge
(by name and by key) and of a port (rx, tx) are read back with a small pcapng
reader and must hold N consecutive frames of the input, byte for byte, with
the annotation (section comment, interfaces, direction, statistics block).
Forwarding must not notice: at the end every counter adds up, nothing was
dropped and no mbuf leaked. Bad targets, counts and paths are refused with
a clear message, a second capture while one runs is refused, capture_stop
and shutdown complete the file.

usage: test_capture.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapng  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import XC_TOPOLOGY, numbered_udp, write_pcap as pftest_write_pcap  # noqa: E402

PIPEFWD, CTL = sys.argv[1], sys.argv[2]
TAG = "cap_t%d" % os.getpid()
FAILS = []
N_FRAMES = 1000


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def frame(i):
    """A distinct IPv4/UDP frame per i (IP id and ports carry i)."""
    return numbered_udp(i, struct.pack("!I", i) + bytes(14))


def write_pcap(path, frames):
    pftest_write_pcap(path, frames, stamp=lambda i: (1, i))


TOPO = XC_TOPOLOGY.replace("{infinite}", ",infinite_rx=1")

# The same with instances: rx fans out to xc.0/xc.1, each feeds tx.0/tx.1.
TOPO_INST = TOPO.replace("type: xconnect,", "type: xconnect, instances: 2,").replace(
    "type: tx,", "type: tx, instances: 2,").replace(
    "1: [rx, xc, tx]", "1: [rx, xc.0, xc.1, tx.0, tx.1]")


class Run:
    def __init__(self, tmp, name, topo=TOPO):
        self.prefix = "%s_%s" % (TAG, name)
        self.topo = os.path.join(tmp, name + ".yaml")
        self.json = os.path.join(tmp, name + ".json")
        with open(self.topo, "w") as f:
            f.write(topo.format(pcap=os.path.join(tmp, "in.pcap")))
        self.logpath = os.path.join(tmp, name + ".log")
        self.log = open(self.logpath, "w")
        # -d is only a safety net (finish() sends SIGINT): long enough that a
        # busy machine, where each pipefwd-ctl call takes seconds, never hits
        # it mid-test (60 s did), short of the meson timeout.
        self.proc = subprocess.Popen([PIPEFWD, "-q", "-d", "400", "-j", self.json,
                                      "--capture-dir", tmp, self.topo,
                                      "--", "--file-prefix=" + self.prefix],
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def ctl(self, *args):
        return subprocess.run([CTL, "--file-prefix", self.prefix] + list(args),
                              capture_output=True, text=True, timeout=60)

    def wait_ready(self, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            r = self.ctl("--json", "totals")
            if r.returncode == 0 and json.loads(r.stdout).get("tx", 0) > 0:
                return True
            time.sleep(0.1)
        return False

    def raw(self, command):
        r = self.ctl("raw", command)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None

    def finish(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        rundir = "/var/run/dpdk" if os.geteuid() == 0 else \
            os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
        subprocess.run(["rm", "-rf", os.path.join(rundir, self.prefix)])
        return rc


def frame_index(frames, data):
    return frames.get(data)


def check_capture(path, n, what, frames, direction, iface, comment_words):
    """The file holds n consecutive input frames with the annotation."""
    try:
        f = pcapng.read(path)
    except (OSError, ValueError) as e:
        check(False, "%s: cannot read %s: %s" % (what, path, e))
        return None
    pk = f["packets"]
    check(len(pk) == n, "%s: %d packets in the file, want %d" % (what, len(pk), n))
    idx = [frame_index(frames, p["data"]) for p in pk]
    check(all(i is not None for i in idx),
          "%s: %d captured frames are not input frames" % (what, sum(i is None for i in idx)))
    if all(i is not None for i in idx):
        gaps = [k for k in range(1, len(idx)) if idx[k] != (idx[k - 1] + 1) % N_FRAMES]
        check(not gaps, "%s: not consecutive input frames at %s: %s" % (
            what, gaps[:3], [idx[k - 1:k + 1] for k in gaps[:3]]))
    check(all(p["caplen"] == p["len"] == len(p["data"]) for p in pk),
          "%s: caplen/len differ from the frame length" % what)
    check(all(p["flags"] == direction for p in pk),
          "%s: direction flags %s, want %d" % (what, sorted({p["flags"] for p in pk}), direction))
    check(all(p["if"] == iface for p in pk),
          "%s: interfaces %s, want %d" % (what, sorted({p["if"] for p in pk}), iface))
    ts = [p["ts"] for p in pk]
    now = time.time() * 1e9
    check(all(now - 120e9 < t <= now for t in ts), "%s: timestamps not within the last "
          "two minutes: %s .. %s (now %d)" % (what, min(ts or [0]), max(ts or [0]), now))
    check(ts == sorted(ts), "%s: timestamps go backwards" % what)
    shb = f["shb"] or {}
    comment = " ".join(shb.get("comments", []))
    for w in comment_words:
        check(w in comment, "%s: section comment lacks '%s': %s" % (what, w, comment))
    check("0=p0" in comment and "1=p1" in comment,
          "%s: section comment lacks the interface map: %s" % (what, comment))
    check(shb.get("app", "").startswith("pipefwd"), "%s: application %r" % (what, shb.get("app")))
    hw = [i["hardware"] for i in f["interfaces"]]
    check(hw[:2] == ["vdev-net_pcap0", "vdev-net_null0"], "%s: interfaces %s" % (what, hw))
    st = f["stats"]
    check(len(st) == 1 and st[0]["ifrecv"] == n and st[0]["ifdrop"] == 0 and
          "captured %d" % n in " ".join(st[0]["comments"]),
          "%s: statistics block %s" % (what, st))
    return f


def capture(run, target, n, path, *extra):
    r = run.ctl("capture", target, "-c", str(n), "-w", path, "--wait", "30", *extra)
    check(r.returncode == 0, "capture %s: rc %d: %s %s" % (target, r.returncode, r.stdout,
                                                          r.stderr))
    check("captured %d of %d packets, 0 dropped" % (n, n) in r.stdout,
          "capture %s: result line: %s" % (target, r.stdout))
    return r


def refused(run, args, words, what):
    r = run.ctl("capture", *args)
    check(r.returncode == 1, "%s: rc %d, want 1 (refused): %s" % (what, r.returncode, r.stdout))
    for w in words:
        check(w in r.stderr, "%s: message lacks '%s': %s" % (what, w, r.stderr.strip()))
    return r


def raw_refused(run, params, words, what):
    r = run.raw("/pipefwd/capture," + params)
    err = (r or {}).get("error", "")
    check(err != "", "%s: not refused: %s" % (what, r))
    for w in words:
        check(w in err, "%s: error lacks '%s': %s" % (what, w, err))


def open_pcapngs(pid):
    out = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)).endswith(".pcapng"):
                out.append(fd)
        except OSError:
            pass
    return out


def test_captures(tmp, frames):
    run = Run(tmp, "main")
    if not check(run.wait_ready(), "pipefwd did not start forwarding"):
        run.finish()
        print(open(run.logpath).read())
        return
    cap = os.path.join(tmp, "caps")
    os.mkdir(cap, 0o700)

    # An edge, by name and by telemetry key.
    capture(run, "rx->xc", 100, os.path.join(cap, "edge.pcapng"))
    check_capture(os.path.join(cap, "edge.pcapng"), 100, "edge rx->xc", frames, 0, 0,
                  ["rx->xc", "stage rx", "edge ipv4", "stage xc"])
    capture(run, "xc_to_tx", 100, os.path.join(cap, "key.pcapng"))
    check_capture(os.path.join(cap, "key.pcapng"), 100, "edge xc_to_tx", frames, 0, 0,
                  ["xc_to_tx", "edge xc->tx", "stage tx"])
    # A port: received on p0 (inbound), sent to p1 (outbound, interface 1).
    capture(run, "p0:rx", 100, os.path.join(cap, "p0rx.pcapng"))
    check_capture(os.path.join(cap, "p0rx.pcapng"), 100, "port p0:rx", frames, 1, 0,
                  ["port p0:rx", "received on it by rx"])
    capture(run, "p1", 100, os.path.join(cap, "p1.pcapng"))
    check_capture(os.path.join(cap, "p1.pcapng"), 100, "port p1", frames, 2, 1,
                  ["port p1", "sent to it by tx"])
    # A bigger one, with scapy as a second, independent reader.
    capture(run, "p0:rx", 1000, os.path.join(cap, "big.pcapng"))
    f = check_capture(os.path.join(cap, "big.pcapng"), 1000, "port p0:rx x1000", frames, 1, 0,
                      ["port p0:rx"])
    try:
        from scapy.utils import rdpcap
        sp = rdpcap(os.path.join(cap, "big.pcapng"))
        check([bytes(p) for p in sp] == [p["data"] for p in (f or {"packets": []})["packets"]],
              "scapy reads other packets than the pcapng reader")
    except ImportError:
        print("scapy missing: second reader skipped")
    # Status of the last one.
    r = run.ctl("--json", "capture", "--status")
    st = json.loads(r.stdout) if r.returncode == 0 else {}
    check(st.get("state") == "done" and st.get("captured") == 1000 and
          st.get("wanted") == 1000 and st.get("dropped") == 0 and st.get("target") == "p0:rx" and
          st.get("stages") == "rx" and st.get("file") == os.path.join(cap, "big.pcapng"),
          "capture --status: %s" % st)

    # Refusals, each with its reason.
    refused(run, ["nope", "-c", "10", "-w", os.path.join(cap, "x.pcapng")],
            ["unknown target 'nope'", "edges: rx->xc xc->tx", "ports: p0 p1"], "unknown target")
    refused(run, ["p0:tx", "-c", "10", "-w", os.path.join(cap, "x.pcapng")],
            ["port p0: no stage sends to it"], "port nobody sends to")
    refused(run, ["p0:up", "-c", "10", "-w", os.path.join(cap, "x.pcapng")],
            [":rx or :tx"], "bad direction")
    refused(run, ["rx->xc", "-c", "0", "-w", os.path.join(cap, "x.pcapng")],
            ["count '0'"], "count 0")
    refused(run, ["rx->xc", "-c", "10", "-w", os.path.join(cap, "edge.pcapng")],
            ["edge.pcapng exists", "--force"], "existing file")
    refused(run, ["rx->xc", "-c", "10", "-w", os.path.join(tmp, "nodir", "x.pcapng")],
            ["nodir", "No such file or directory"], "missing directory")
    os.symlink(os.path.join(cap, "target.pcapng"), os.path.join(cap, "link.pcapng"))
    refused(run, ["rx->xc", "-c", "10", "-w", os.path.join(cap, "link.pcapng"), "--force"],
            ["link.pcapng", "symlink"], "file is a symlink")
    check(not os.path.exists(os.path.join(cap, "target.pcapng")),
          "a capture followed a symlink")
    os.symlink(cap, os.path.join(tmp, "dirlink"))
    refused(run, ["rx->xc", "-c", "10", "-w", os.path.join(tmp, "dirlink", "x.pcapng")],
            ["dirlink", "symlink"], "directory is a symlink")
    outside = tempfile.mkdtemp(prefix="pipefwd_capture_outside_")
    refused(run, ["rx->xc", "-c", "10", "-w", os.path.join(outside, "x.pcapng")],
            ["outside the capture directory"], "file outside the capture directory")
    check(os.listdir(outside) == [], "a capture wrote outside the capture directory")
    os.rmdir(outside)
    raw_refused(run, "rx->xc,10,caps/../../x.pcapng", ["'..'"], "path with ..")
    raw_refused(run, "rx->xc,10,snaplen=5,%s" % os.path.join(cap, "s.pcapng"), ["snaplen"],
                "snaplen too small")
    raw_refused(run, "rx->xc,10,%s/" % cap, ["directory, not a file"], "path is a directory")
    raw_refused(run, "rx->xc", ["usage"], "no count, no path")
    r = run.raw("/pipefwd/capture," + "x" * 2000)
    check(r is None or "error" in r, "oversize params: %s" % r)
    check(not os.path.exists(os.path.join(cap, "x.pcapng")) and
          not os.path.exists(os.path.join(cap, "s.pcapng")),
          "a refused capture left a file behind")
    # --force overwrites.
    capture(run, "rx->xc", 10, os.path.join(cap, "edge.pcapng"), "--force")
    check_capture(os.path.join(cap, "edge.pcapng"), 10, "overwritten edge", frames, 0, 0,
                  ["rx->xc"])

    # One capture at a time; stop ends it with a complete file.
    long_path = os.path.join(cap, "long.pcapng")
    st = run.raw("/pipefwd/capture,xc->tx,100000000,%s" % long_path) or {}
    check(st.get("state") == "running", "long capture did not start: %s" % st)
    refused(run, ["p0:rx", "-c", "10", "-w", os.path.join(cap, "x2.pcapng")],
            ["a capture is running"], "second capture")
    time.sleep(0.05)   # (a line-rate capture: millions of packets a second to read back)
    r = run.ctl("--json", "capture", "--stop")
    st = json.loads(r.stdout) if r.returncode == 0 else {}
    check(st.get("state") == "stopped" and 0 < st.get("captured", 0) < 100000000,
          "capture --stop: %s" % st)
    try:
        f = pcapng.read(long_path, packets=False)
        check(f["count"] == st.get("captured"),
              "stopped capture: %d packets in the file, status says %s" % (
                  f["count"], st.get("captured")))
        check(len(f["stats"]) == 1 and "stopped" in " ".join(f["stats"][0]["comments"]),
              "stopped capture: statistics block %s" % f["stats"])
    except (OSError, ValueError) as e:
        check(False, "stopped capture: unreadable file: %s" % e)
    check(open_pcapngs(run.proc.pid) == [], "pipefwd keeps capture files open")

    # Shutdown during a capture completes the file.
    sd_path = os.path.join(cap, "shutdown.pcapng")
    st = run.raw("/pipefwd/capture,p1:tx,100000000,%s" % sd_path) or {}
    check(st.get("state") == "running", "shutdown capture did not start: %s" % st)
    time.sleep(0.05)
    rc = run.finish()
    check(rc == 0, "pipefwd exit status %d" % rc)
    try:
        f = pcapng.read(sd_path, packets=False)
        check(f["count"] > 0 and len(f["stats"]) == 1 and
              "stopped" in " ".join(f["stats"][0]["comments"]),
              "capture cut by shutdown: %d packets, stats %s" % (f["count"], f["stats"]))
    except (OSError, ValueError) as e:
        check(False, "capture cut by shutdown: unreadable file: %s" % e)

    # Forwarding did not notice: exact accounting, no drop, no leak.
    try:
        rep = json.load(open(run.json))
    except (OSError, ValueError) as e:
        check(False, "no stats JSON: %s" % e)
        return
    t = rep["totals"]
    check(t["unaccounted"] == 0 and t["dropped"] == 0 and t["rx"] == t["tx"] and t["rx"] > 0,
          "totals with captures: %s" % t)
    check(rep["mbufs_in_use_after_stop"] == 0, "mbufs leaked: %s" % rep["mbufs_in_use_after_stop"])
    for name, s in rep["stages"].items():
        check(s["packets"] == t["rx"] and not any(s["drops"].values()),
              "stage %s: packets %d (rx %d), drops %s" % (name, s["packets"], t["rx"],
                                                          {k: v for k, v in s["drops"].items()
                                                           if v}))
    for name, r in rep["rings"].items():
        # Fused: the edges go direct (enqueued 0); either way every packet crossed.
        check(r["ring_full"] == 0 and r["enqueued"] == r["dequeued"] and
              r["enqueued"] + r["direct"] == t["rx"], "ring %s: %s" % (name, r))
    log = open(run.logpath).read()
    check("capture 1: next 100 packets of rx->xc" in log, "no capture line in the log")


def test_instances(tmp, frames):
    """An edge into a stage with instances: one ring, or every ring of the group."""
    run = Run(tmp, "inst", TOPO_INST)
    if not check(run.wait_ready(), "pipefwd with instances did not start forwarding"):
        run.finish()
        print(open(run.logpath).read())
        return
    cap = os.path.join(tmp, "caps_inst")
    os.mkdir(cap, 0o700)
    for target, stages, n in (("rx->xc", "xc.0,xc.1", 200), ("rx->xc.1", "xc.1", 100),
                              ("rx_to_xc_0", "xc.0", 100), ("xc->tx", "tx.0,tx.1", 200),
                              ("p1:tx", "tx.0,tx.1", 200)):
        path = os.path.join(cap, target.replace(">", "").replace(":", "_") + ".pcapng")
        capture(run, target, n, path)
        r = run.ctl("--json", "capture", "--status")
        st = json.loads(r.stdout) if r.returncode == 0 else {}
        check(st.get("stages") == stages, "instances %s: copied by %s, want %s" % (
            target, st.get("stages"), stages))
        try:
            pk = pcapng.read(path)["packets"]
        except (OSError, ValueError) as e:
            check(False, "instances %s: unreadable: %s" % (target, e))
            continue
        idx = [frames.get(p["data"]) for p in pk]
        check(len(pk) == n and None not in idx and len(set(idx)) == n,
              "instances %s: %d packets, %d not input frames, %d distinct" % (
                  target, len(pk), idx.count(None), len(set(idx))))
    rc = run.finish()
    rep = json.load(open(run.json))
    t = rep["totals"]
    check(rc == 0 and t["unaccounted"] == 0 and t["dropped"] == 0 and
          rep["mbufs_in_use_after_stop"] == 0,
          "instances: rc %d, totals %s, mbufs %s" % (rc, t, rep["mbufs_in_use_after_stop"]))


# Two ports into one rx stage (issue 32 item 7): p0 replays the input frames,
# p1 a second set; each goes out of a net_null port of its own.
TOPO_TWO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={pcap},infinite_rx=1" }}
  p1: {{ device: "net_pcap1,rx_pcap={pcap1},infinite_rx=1" }}
  p2: {{ device: "net_null0" }}
  p3: {{ device: "net_null1" }}
stages:
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: xc }} }}
  xc: {{ type: xconnect, pairs: {{ p0: p2, p1: p3 }}, next: tx }}
  tx: {{ type: tx, ports: [p2, p3] }}
lcores:
  1: [rx, xc, tx]
"""


def test_two_ports(tmp, frames, frames1):
    """capture PORT:rx takes that port's frames only, though one rx stage reads both
    (the selector once read in_port, which rx had not written yet)."""
    run = Run(tmp, "two", TOPO_TWO.replace("{pcap1}", os.path.join(tmp, "in1.pcap")))
    if not check(run.wait_ready(), "pipefwd with two rx ports did not start forwarding"):
        run.finish()
        print(open(run.logpath).read())
        return
    cap = os.path.join(tmp, "caps_two")
    os.mkdir(cap, 0o700)
    for port, iface, mine, other in (("p0", 0, frames, frames1), ("p1", 1, frames1, frames)):
        path = os.path.join(cap, port + ".pcapng")
        capture(run, port + ":rx", 200, path)
        try:
            pk = pcapng.read(path)["packets"]
        except (OSError, ValueError) as e:
            check(False, "two ports %s:rx: unreadable: %s" % (port, e))
            continue
        ours = sum(p["data"] in mine for p in pk)
        theirs = sum(p["data"] in other for p in pk)
        check(len(pk) == 200 and ours == 200,
              "two ports %s:rx: %d packets, %d received on %s, %d on the other port" % (
                  port, len(pk), ours, port, theirs))
        check(all(p["if"] == iface and p["flags"] == 1 for p in pk),
              "two ports %s:rx: interfaces %s, directions %s" % (
                  port, sorted({p["if"] for p in pk}), sorted({p["flags"] for p in pk})))
    rc = run.finish()
    rep = json.load(open(run.json))
    t = rep["totals"]
    check(rc == 0 and t["unaccounted"] == 0 and t["dropped"] == 0 and
          rep["mbufs_in_use_after_stop"] == 0,
          "two ports: rc %d, totals %s, mbufs %s" % (rc, t, rep["mbufs_in_use_after_stop"]))


def main():
    tmp = tempfile.mkdtemp(prefix="pipefwd_capture_")
    os.chmod(tmp, 0o700)
    frames = [frame(i) for i in range(N_FRAMES)]
    write_pcap(os.path.join(tmp, "in.pcap"), frames)
    index = {f: i for i, f in enumerate(frames)}
    frames1 = [frame(N_FRAMES + i) for i in range(N_FRAMES)]
    write_pcap(os.path.join(tmp, "in1.pcap"), frames1)
    try:
        test_two_ports(tmp, index, {f: i for i, f in enumerate(frames1)})
        test_captures(tmp, index)
        test_instances(tmp, index)
    finally:
        if not FAILS:
            subprocess.run(["rm", "-rf", tmp])
    if FAILS:
        print("%d failure(s); files kept in %s" % (len(FAILS), tmp))
        return 1
    print("capture tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
