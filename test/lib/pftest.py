# SPDX-License-Identifier: BSD-3-Clause
"""Small helpers shared by the Python test scripts (test/reload, test/stats,
test/capture): raw frames built without scapy (for speed), classic pcap
files, atomic config rewrites, the telemetry socket and the end-of-run
report. Import with
    sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts"))
from pcaplib import read_pcap, records as pcap_records, write_pcap  # noqa: E402,F401

# rx -> xconnect -> tx from a pcap into net_null, fused on lcore 1: the
# pipeline the stats and capture tests drive. Format with pcap= and
# infinite= (",infinite_rx=1" to loop the file, "" to read it once).
XC_TOPOLOGY = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={pcap}{infinite}" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: xc }} }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, xc, tx]
"""


class LogFollower:
    """Reads a running process's stderr (text mode) in a thread, so a test can
    wait for a line (start-up, a reload's acknowledgement) instead of
    sleeping a fixed time that a busy machine overruns."""

    def __init__(self, proc):
        self.lines = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, args=(proc,), daemon=True)
        self.thread.start()

    def _run(self, proc):
        for line in proc.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait_for(self, *texts, start=0, timeout=30.0):
        """Index of the first line from @start holding one of @texts, or None."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(start, len(self.lines)):
                    if any(t in self.lines[i] for t in texts):
                        return i
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def reload(self, proc, signum):
        """Send @signum (SIGHUP) and wait until the reload is applied or refused."""
        n = len(self.lines)
        proc.send_signal(signum)
        return self.wait_for(" applied in ", "reload refused", start=n) is not None

    def text(self):
        self.thread.join(timeout=5)
        return "".join(self.lines)


def check_run(returncode, log, stats_path, total, starved_ok=False, min_reloads=3):
    """The end-of-run checks every reload test shares: a clean exit, exact
    totals, no mbuf leaked, every input frame received and none dropped,
    and at least @min_reloads reloads applied with none refused. Returns (stats, errors).

    With @starved_ok, a run that read fewer frames than @total but dropped
    none was starved (the machine withheld the CPU until the idle exit), not
    lossy: it is reported, not failed; the caller checks its outputs against
    totals.rx."""
    errors = []
    if returncode != 0:
        errors.append(f"pipefwd exited {returncode}: {log[-2000:]}")
    st = json.load(open(stats_path))
    tot = st["totals"]
    if tot["unaccounted"] != 0:
        errors.append(f"unaccounted packets: {tot}")
    if st["mbufs_in_use_after_stop"] != 0:
        errors.append(f"mbufs leaked: {st['mbufs_in_use_after_stop']}")
    if starved_ok and 0 < tot["rx"] < total and tot["dropped"] == 0:
        print(f"note: starved, not lossy: read {tot['rx']} of {total} frames before the "
              "idle exit, dropped none")
    elif tot["rx"] != total or tot["dropped"] != 0:
        errors.append(f"rx {tot['rx']} of {total} frames, {tot['dropped']} dropped")
    # SIGHUPs sent while a reload runs coalesce on a busy machine: ask for a few.
    if st["reload"]["failures"] != 0 or st["reload"]["generation"] < min_reloads:
        errors.append(f"reloads: {st['reload']} (want >= {min_reloads} applied): {log[-1000:]}")
    return st, errors

def ipv4_udp(eth, src, dst, ip_id, sport, dport, payload):
    """@eth (14 bytes) + IPv4 (valid checksum, TTL 64) + UDP (no checksum) + @payload.
    @src and @dst are 4-byte addresses."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ip_id & 0xFFFF, 0, 64,
                               17, 0, bytes(src), bytes(dst)))
    s = sum(struct.unpack("!10H", bytes(ip)))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = struct.pack("!H", ~s & 0xFFFF)
    return eth + bytes(ip) + udp


def dpdk_rundir(prefix):
    """Where the EAL of --file-prefix @prefix keeps its runtime files (the telemetry socket)."""
    return "/var/run/dpdk/" + prefix if os.geteuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", prefix)


def stop_pipefwd(proc, log, rundir):
    """SIGINT (a clean stop), wait, close @log, remove @rundir; the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        rc = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    log.close()
    shutil.rmtree(rundir, ignore_errors=True)
    return rc


def write_atomic(path, text):
    """Replace @path with @text so a reload never reads a half-written file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def telemetry(path, cmd, timeout=None):
    """One command on the DPDK telemetry socket @path; the value under its name.
    With @timeout (seconds) a socket that does not answer raises socket.timeout."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    s.connect(path)
    s.recv(4096)
    s.send(cmd.encode())
    r = json.loads(s.recv(65536).decode())
    s.close()
    return r[cmd.split(",")[0]]


def checker(errors):
    """check(cond, msg): a failure goes into @errors and is printed at once (so it
    shows beside what the test printed around it); returns @cond."""
    def check(cond, msg):
        if not cond:
            errors.append(msg)
            print("FAIL: " + msg, flush=True)
        return cond
    return check


def finish(errors, scratch_dir):
    """Print the failures, remove @scratch_dir on success (keep it otherwise), exit."""
    for e in errors[:20]:
        print("FAIL:", e)
    if not errors:
        subprocess.run(["rm", "-rf", scratch_dir])
    else:
        print(f"kept {scratch_dir}")
    sys.exit(1 if errors else 0)


def numbered_udp(i, payload=bytes(18)):
    """The i-th of a set of distinct 64-byte IPv4/UDP frames 10.0.0.1 ->
    10.0.1.(i % 250 + 1): IP id i, source port 1000 + i % 100, port 2000."""
    return ipv4_udp(bytes.fromhex("020000000002020000000001") + b"\x08\x00", [10, 0, 0, 1],
                    [10, 0, 1, i % 250 + 1], i, 1000 + i % 100, 2000, payload)


class Ctl:
    """pipefwd-ctl against the pipefwd of --file-prefix @prefix; failures go to @check
    (check(cond, msg)). ctl(*args) runs it, .json(*args) parses --json, .refused()
    expects a refusal (exit 1) whose message holds given words."""

    def __init__(self, ctl, prefix, check):
        self.ctl, self.prefix, self.check = ctl, prefix, check

    def __call__(self, *args, ok=True):
        r = subprocess.run([self.ctl, "--file-prefix", self.prefix, "--timeout", "20"] +
                           list(args), capture_output=True, text=True, timeout=90)
        if ok:
            self.check(r.returncode == 0, "pipefwd-ctl %s: rc %d %s" % (
                " ".join(args), r.returncode, r.stderr))
        self.check("Traceback" not in r.stderr, "pipefwd-ctl %s: traceback %s" % (args, r.stderr))
        return r

    def json(self, *args):
        r = self("--json", *args)
        return json.loads(r.stdout) if r.returncode == 0 else {}

    def refused(self, args, words):
        r = self(*args, ok=False)
        print(r.stderr, end="")
        self.check(r.returncode == 1 and words in r.stderr,
                   "%s: rc %d, want a refusal with %r: %r" % (args, r.returncode, words,
                                                             r.stderr))


class Tmux:
    """A private tmux server (socket name @sock) running @cmd in one pane of
    @cols x @rows; the pane stays after the command, showing CMD-EXIT=status."""

    def __init__(self, sock, name, cmd, cols, rows):
        self.sock, self.name = sock, name
        self.t(["new-session", "-d", "-s", name, "-x", str(cols), "-y", str(rows),
                "%s; echo CMD-EXIT=$?; sleep 120" % cmd])

    def t(self, args):
        return subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] + args,
                              capture_output=True, text=True, timeout=10).stdout

    def keys(self, *keys):
        self.t(["send-keys", "-t", self.name] + list(keys))

    def resize(self, cols, rows):
        self.t(["resize-window", "-t", self.name, "-x", str(cols), "-y", str(rows)])

    def screen(self):
        return self.t(["capture-pane", "-p", "-t", self.name])

    def alternate(self):
        return self.t(["display-message", "-p", "-t", self.name, "#{alternate_on}"]).strip()

    def wait_for(self, test, timeout):
        """The screen once @test (a string it holds, or a function of it) is true, else None."""
        end = time.monotonic() + timeout
        while True:
            scr = self.screen()
            if (test in scr) if isinstance(test, str) else test(scr):
                return scr
            if time.monotonic() > end:
                return None
            time.sleep(0.05)

    def close(self):
        self.t(["kill-server"])
