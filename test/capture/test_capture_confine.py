#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Captures stay beneath the capture directory (issue 16, defect 1).

pipefwd runs with --capture-dir CAPS (a temp dir); a victim file lives in a
second temp dir of this test, outside CAPS. Every attempt to reach it is
refused and leaves it byte for byte unchanged, with and without overwrite:
an absolute path outside CAPS, a relative '..' path, a symlink in CAPS to
it, a symlinked directory in CAPS. Inside CAPS, overwrite replaces only a
capture pipefwd wrote (not a plain file of the user), and a FIFO is refused
at once: the telemetry socket keeps answering. A second run without
--capture-dir writes a relative name into its runtime directory's captures/.

usage: test_capture_confine.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import XC_TOPOLOGY, numbered_udp, write_pcap  # noqa: E402

PIPEFWD, CTL = sys.argv[1], sys.argv[2]
FAILS = []
VICTIM = b"root:x:0:0:not really a passwd file, owned by the test\n"


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


class Run:
    def __init__(self, tmp, name, capdir):
        self.prefix = "hd_capconf_%s_%d" % (name, os.getpid())
        topo = os.path.join(tmp, name + ".yaml")
        with open(topo, "w") as f:
            f.write(XC_TOPOLOGY.format(pcap=os.path.join(tmp, "in.pcap"),
                                       infinite=",infinite_rx=1"))
        self.logf = open(os.path.join(tmp, name + ".log"), "w")
        extra = ["--capture-dir", capdir] if capdir else []
        self.proc = subprocess.Popen([PIPEFWD, "-q", "-d", "600"] + extra +
                                     [topo, "--", "--file-prefix=" + self.prefix],
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        self.rundir = "/var/run/dpdk" if os.geteuid() == 0 else \
            os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
        self.rundir = os.path.join(self.rundir, self.prefix)

    def ctl(self, *args, timeout=20):
        return subprocess.run([CTL, "--file-prefix", self.prefix] + list(args),
                              capture_output=True, text=True, timeout=timeout)

    def raw(self, command):
        r = self.ctl("raw", command)
        try:
            return json.loads(r.stdout)
        except ValueError:
            print("raw %s: rc %d: %s %s" % (command, r.returncode, r.stdout, r.stderr))
            return None

    def ready(self, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            r = self.ctl("--json", "totals")
            if r.returncode == 0 and json.loads(r.stdout).get("tx", 0) > 0:
                return True
            time.sleep(0.1)
        return False

    def finish(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        subprocess.run(["rm", "-rf", self.rundir])
        return rc


def refused(run, params, words, what):
    t0 = time.monotonic()
    r = run.raw("/pipefwd/capture," + params) or {}
    err = r.get("error", "")
    check(err != "", "%s: not refused: %s" % (what, r))
    for w in words:
        check(w in err, "%s: error lacks '%s': %s" % (what, w, err))
    check(time.monotonic() - t0 < 15, "%s: the refusal took %.1f s" % (what, time.monotonic() - t0))


def wait_done(run, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = run.raw("/pipefwd/capture_status") or {}
        if st.get("state") not in (None, "running"):
            return st
        time.sleep(0.05)
    return {}


def main():
    tmp = tempfile.mkdtemp(prefix="pipefwd_capconf_")
    outside = tempfile.mkdtemp(prefix="pipefwd_capconf_outside_")
    caps = os.path.join(tmp, "caps")
    os.mkdir(caps, 0o700)
    write_pcap(os.path.join(tmp, "in.pcap"), [numbered_udp(i) for i in range(100)])
    victim = os.path.join(outside, "victim")
    with open(victim, "wb") as f:
        f.write(VICTIM)
    run = Run(tmp, "main", caps)
    try:
        if not check(run.ready(), "pipefwd did not start: " + open(run.logf.name).read()[-2000:]):
            return
        for ow in ("", "overwrite,"):
            refused(run, "rx->xc,5,%s%s" % (ow, victim), ["outside the capture directory"],
                    "absolute path outside (%s)" % (ow or "new"))
            refused(run, "rx->xc,5,%s../%s/victim" % (ow, os.path.basename(outside)),
                    ["'..'"], "relative .. path (%s)" % (ow or "new"))
            refused(run, "rx->xc,5,%s%s/../../%s/victim" % (ow, caps, os.path.basename(outside)),
                    ["'..'"], "absolute .. path (%s)" % (ow or "new"))
        os.symlink(victim, os.path.join(caps, "link.pcapng"))
        refused(run, "rx->xc,5,overwrite,link.pcapng", ["symlink"], "symlink to the victim")
        os.symlink(outside, os.path.join(caps, "dirlink"))
        refused(run, "rx->xc,5,dirlink/new.pcapng", ["symlink"], "symlinked directory")
        refused(run, "rx->xc,5,overwrite,dirlink/victim", ["symlink"],
                "symlinked directory, overwrite")
        check(os.listdir(outside) == ["victim"], "a file appeared outside: %s" % os.listdir(outside))
        # A plain file of the user inside CAPS is not a capture: not overwritten.
        plain = os.path.join(caps, "notes.txt")
        with open(plain, "wb") as f:
            f.write(VICTIM)
        refused(run, "rx->xc,5,overwrite,notes.txt", ["not a capture file pipefwd wrote"],
                "overwrite a plain file")
        check(open(plain, "rb").read() == VICTIM, "the plain file in CAPS changed")
        # A FIFO: refused at once, the socket keeps answering.
        os.mkfifo(os.path.join(caps, "fifo.pcapng"))
        refused(run, "rx->xc,5,fifo.pcapng", ["exists"], "FIFO")
        refused(run, "rx->xc,5,overwrite,fifo.pcapng", ["fifo.pcapng"], "FIFO, overwrite")
        check(run.raw("/pipefwd/capture_status") is not None, "telemetry stopped answering")
        # What is allowed: a new file, then overwriting that capture.
        for ow in ("", "overwrite,"):
            st = run.raw("/pipefwd/capture,rx->xc,5,%sok.pcapng" % ow) or {}
            check(st.get("state") == "running", "capture ok.pcapng (%s): %s" % (ow, st))
            st = wait_done(run)
            check(st.get("state") == "done" and st.get("file") == os.path.join(caps, "ok.pcapng"),
                  "capture ok.pcapng (%s): %s" % (ow, st))
        check(open(victim, "rb").read() == VICTIM, "the victim file changed")
    finally:
        rc = run.finish()
    check(rc == 0, "pipefwd exited %d" % rc)
    # The default capture directory: the runtime directory's captures/.
    run = Run(tmp, "default", None)
    try:
        if check(run.ready(), "pipefwd (default dir) did not start"):
            st = run.raw("/pipefwd/capture,rx->xc,5,d.pcapng") or {}
            st = wait_done(run)
            want = os.path.join(run.rundir, "captures", "d.pcapng")
            check(st.get("state") == "done" and st.get("file") == want and os.path.isfile(want),
                  "default capture directory: %s (want %s)" % (st, want))
            refused(run, "rx->xc,5,%s" % os.path.join(tmp, "x.pcapng"),
                    ["outside the capture directory"], "default dir: absolute path outside")
    finally:
        run.finish()
    check(open(victim, "rb").read() == VICTIM, "the victim file changed")
    if FAILS:
        print("%d failure(s); files kept in %s %s" % (len(FAILS), tmp, outside))
        sys.exit(1)
    subprocess.run(["rm", "-rf", tmp, outside])
    print("capture confinement: ok")


if __name__ == "__main__":
    main()
