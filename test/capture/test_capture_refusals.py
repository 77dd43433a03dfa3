#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A refused capture says why and changes nothing (issue 32 item 10).

pipefwd runs in a mount namespace of its own (unshare -m) whose capture
directory is a 256 KiB tmpfs. A first capture of 10 frames is done; the
test then fills the tmpfs, and a second capture must be refused with the
reason ("No space left on device": it said "Success"), leave no file, and
leave `capture --status` showing the first capture (it showed the refused
request as capture 1, done). A capture whose file name or target holds a
newline or ESC is refused (nothing made, nothing logged raw), and so is
any socket command's parameter holding one (a live change's entry). At exit:
status 0, the accounting exact, no mbuf in use.

Needs root and unshare (a tmpfs mount): skipped (77) without.

usage: test_capture_refusals.py PIPEFWD PIPEFWD_CTL
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from pftest import XC_TOPOLOGY, numbered_udp, write_pcap  # noqa: E402

PIPEFWD, CTL = sys.argv[1], sys.argv[2]
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def main():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("SKIP: needs root and unshare")
        return 77
    tmp = tempfile.mkdtemp(prefix="pipefwd_caprefuse_")
    caps = os.path.join(tmp, "caps")
    os.mkdir(caps, 0o700)
    write_pcap(os.path.join(tmp, "in.pcap"), [numbered_udp(i) for i in range(100)])
    topo = os.path.join(tmp, "xc.yaml")
    with open(topo, "w") as f:
        f.write(XC_TOPOLOGY.format(pcap=os.path.join(tmp, "in.pcap"), infinite=",infinite_rx=1"))
    prefix = "hd_caprefuse_%d" % os.getpid()
    report = os.path.join(tmp, "report.json")
    log = open(os.path.join(tmp, "pipefwd.log"), "w")
    # The tmpfs exists in pipefwd's mount namespace only; the test reaches it through
    # /proc/PID/root (the same namespace's view of the tree).
    proc = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         'mount -t tmpfs -o size=256k,mode=0700 tmpfs "$1" && shift && exec "$@"', "sh",
         caps, PIPEFWD, "-q", "-d", "600", "-j", report, "--capture-dir", caps, topo, "--",
         "--file-prefix=" + prefix], stdout=log, stderr=subprocess.STDOUT)
    view = "/proc/%d/root%s" % (proc.pid, caps)

    def ctl(*args):
        return subprocess.run([CTL, "--file-prefix", prefix] + list(args), capture_output=True,
                              text=True, timeout=30)

    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and proc.poll() is None:
            r = ctl("--json", "totals")
            if r.returncode == 0 and json.loads(r.stdout).get("tx", 0) > 0:
                break
            time.sleep(0.1)
        else:
            check(False, "pipefwd did not start: " + open(log.name).read()[-2000:])
            return 1
        r = ctl("capture", "p0:rx", "-c", "10", "-w", "first.pcapng")
        check(r.returncode == 0 and "captured 10 of 10" in r.stdout,
              "first capture: rc %d %s %s" % (r.returncode, r.stdout, r.stderr))
        # Fill the tmpfs: every block taken.
        fd = os.open(os.path.join(view, "fill"), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        before = sorted(os.listdir(view))
        r = ctl("capture", "rx->xc", "-c", "10", "-w", "second.pcapng")
        check(r.returncode != 0 and "No space left on device" in r.stderr and
              "Success" not in r.stderr,
              "capture into a full directory: rc %d, %r" % (r.returncode, r.stderr))
        check(sorted(os.listdir(view)) == before,
              "the refused capture left files: %s" % sorted(os.listdir(view)))
        r = ctl("--json", "capture", "--status")
        st = json.loads(r.stdout) if r.returncode == 0 else {}
        check(st.get("id") == 1 and st.get("target") == "p0:rx" and
              st.get("file") == os.path.join(caps, "first.pcapng") and
              st.get("state") == "done" and st.get("wanted") == 10,
              "status after the refusal is not the first capture: %s" % st)
        os.unlink(os.path.join(view, "fill"))
        # Newline and ESC in a file name or a target: refused, nothing made.
        for target, name in (("p0:rx", "a\nb.pcapng"), ("p0:rx", "c\x1b[31m.pcapng"),
                             ("p0\x1b[2J", "d.pcapng")):
            r = ctl("capture", target, "-c", "1", "-w", name)
            check(r.returncode != 0 and "a control character" in r.stderr,
                  "capture %r into %r: rc %d, %r" % (target, name, r.returncode, r.stderr))
        # Every command of the socket holds to the same rule (app/console/commands.c): a
        # live change naming a next hop 'n1<ESC>[31m' was logged raw when refused.
        for cmd in ("/pipefwd/change,add,xc,routes,10.0.0.0/8 n1\x1b[31m",
                    "/pipefwd/change,add,xc,routes,10.0.0.0/8 n1\n  x: 1",
                    "/pipefwd/stages,rx\x1b"):
            r = ctl("raw", cmd)
            check("a control character" in r.stdout + r.stderr,
                  "%r: not refused for its control character: %r" % (cmd, r.stdout + r.stderr))
        check(sorted(os.listdir(view)) == ["first.pcapng"],
              "files in the capture directory: %s" % sorted(os.listdir(view)))
        check("\x1b" not in open(log.name).read(), "an ESC reached pipefwd's log")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.close()
    check(rc == 0, "pipefwd exited %d: %s" % (rc, open(log.name).read()[-1500:]))
    try:
        with open(report) as f:
            rep = json.load(f)
        check(rep["totals"]["unaccounted"] == 0 and rep["mbufs_in_use_after_stop"] == 0,
              "exit report: %s, mbufs %s" % (rep["totals"], rep["mbufs_in_use_after_stop"]))
    except (OSError, ValueError, KeyError) as e:
        check(False, "no exit report: %s" % e)
    if FAILS:
        print("%d failure(s); files kept in %s" % (len(FAILS), tmp))
        return 1
    shutil.rmtree(tmp)
    print("capture refusals: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
