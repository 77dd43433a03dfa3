#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""OVS-DPDK as an L2 peer for scripts/bench.py: one private switch, run until SIGINT.

    bench_ovs.py --prefix P --rx PCAP --macs FILE --table-size N [--mem MB] [--cpu C]

Starts ovsdb-server and ovs-vswitchd-dpdk (Debian's openvswitch-switch-dpdk)
with every file under a temp dir of its own (database, sockets, pid files,
logs: nothing under /etc/openvswitch or /var/run/openvswitch), ovs-vswitchd in
a network namespace of its own (the bridge's internal port is a tap device).
One netdev bridge with the NORMAL action (the default flow: MAC learning),
two dpdk ports on the vdevs every bench program uses: p1 = net_null0 (the
sink, added first so it is DPDK port 0), then p0 = net_pcap0 replaying PCAP.
Before p0 starts, every MAC of FILE ("MAC p1" lines, pipefwd's static table)
is put in the MAC table as a static entry on p1 (`fdb/add`), as pipefwd loads
it, so no frame is flooded. On SIGINT or SIGTERM it stops both daemons and
removes the temp dir; it exits non-zero if the switch could not be set up.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
PR_SET_PDEATHSIG = 1


def log(msg):
    print("bench_ovs: " + msg, flush=True)


def die_with_parent():
    """Children die with this wrapper even if it is killed (no stray switch)."""
    import ctypes
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def wait_for(path, proc, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %d" % (what, proc.returncode))
        if time.monotonic() > deadline:
            raise RuntimeError("%s: no %s after %d s" % (what, path, timeout))
        time.sleep(0.05)


class Unixctl:
    """ovs-appctl's JSON-RPC over the daemon's control socket, several calls in flight."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf, self.dec = "", json.JSONDecoder()

    def _reply(self):
        while True:
            txt = self.buf.lstrip()
            try:
                obj, end = self.dec.raw_decode(txt)
                self.buf = txt[end:]
                return obj
            except ValueError:
                data = self.s.recv(65536)
                if not data:
                    raise RuntimeError("ovs-vswitchd closed its control socket")
                self.buf += data.decode()

    def calls(self, method, params_list, window=64):
        """Every call of method; the daemon stalls if replies are not read, so
        at most window requests are outstanding."""
        sent = done = 0
        while done < len(params_list):
            while sent < len(params_list) and sent - done < window:
                self.s.sendall(json.dumps(dict(method=method, params=params_list[sent],
                                               id=sent)).encode())
                sent += 1
            r = self._reply()
            if r.get("error"):
                raise RuntimeError("%s %s: %s" % (method, params_list[r["id"]], r["error"]))
            done += 1

    def close(self):
        self.s.close()


class Switch:
    def __init__(self, args):
        self.a = args
        self.dir = tempfile.mkdtemp(prefix="pipefwd-bench-ovs-")
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_LOGDIR=self.dir, OVS_SYSCONFDIR=self.dir)
        self.db = os.path.join(self.dir, "db.sock")
        self.ctl = os.path.join(self.dir, "ovs-vswitchd.ctl")
        self.procs = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, cmd, timeout=120):
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
        return r.stdout

    def vsctl(self, *args, wait=True):
        return self.run(["ovs-vsctl", "--db=unix:" + self.db, "--timeout=120"] +
                        ([] if wait else ["--no-wait"]) + list(args))

    def spawn(self, cmd, name):
        log(" ".join(cmd))
        p = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL,
                             preexec_fn=die_with_parent)
        self.procs.append((name, p))
        return p

    def start(self):
        a = self.a
        conf = self.path("conf.db")
        self.run(["ovsdb-tool", "create", conf, SCHEMA])
        p = self.spawn(["ovsdb-server", conf, "--remote=punix:" + self.db,
                        "--unixctl=" + self.path("ovsdb-server.ctl"),
                        "--pidfile=" + self.path("ovsdb-server.pid"),
                        "--log-file=" + self.path("ovsdb-server.log"), "-vconsole:off"],
                       "ovsdb-server")
        wait_for(self.db, p, "ovsdb-server")
        extra = "--no-huge --legacy-mem -m %d --no-pci --file-prefix=%s" % (a.mem, a.prefix)
        self.vsctl("init", wait=False)
        self.vsctl("set", "Open_vSwitch", ".", "other_config:dpdk-init=true",
                   "other_config:dpdk-extra=" + extra,
                   "other_config:dpdk-lcore-mask=0x1",
                   "other_config:pmd-cpu-mask=%#x" % (1 << a.cpu), wait=False)
        # A network namespace of its own: the bridge's internal port is a tap.
        p = self.spawn(["unshare", "--net", VSWITCHD, "unix:" + self.db, "--unixctl=" + self.ctl,
                        "--pidfile=" + self.path("ovs-vswitchd.pid"),
                        "--log-file=" + self.path("ovs-vswitchd.log"), "-vconsole:off"],
                       "ovs-vswitchd")
        wait_for(self.ctl, p, "ovs-vswitchd")
        self.vsctl("add-br", "br0", "--", "set", "Bridge", "br0", "datapath_type=netdev",
                   "other_config:mac-table-size=%d" % a.table_size,
                   "--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dpdk",
                   "options:dpdk-devargs=net_null0,no-rx=1")
        macs = [ln.split()[0] for ln in open(a.macs) if ln.strip() and not ln.startswith("#")]
        t0 = time.monotonic()
        ctl = Unixctl(self.ctl)
        ctl.calls("fdb/add", [["br0", "p1", "0", m] for m in macs])
        ctl.close()
        n = len(self.run(["ovs-appctl", "-t", self.ctl, "fdb/show", "br0"]).splitlines()) - 1
        if n < len(macs):
            raise RuntimeError("MAC table holds %d of %d static entries" % (n, len(macs)))
        log("%d static MACs on p1 in %.1f s" % (len(macs), time.monotonic() - t0))
        self.vsctl("add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dpdk",
                   "options:dpdk-devargs=net_pcap0,rx_pcap=%s,infinite_rx=1" % a.rx)
        log("forwarding p0 -> p1 (NORMAL)")

    def report(self):
        """What the PMD did (cache hits, upcalls) and how many megaflows, for the log."""
        for cmd in (["dpif-netdev/pmd-stats-show"], ["dpctl/show", "-s"]):
            r = subprocess.run(["ovs-appctl", "-t", self.ctl] + cmd, env=self.env,
                               capture_output=True, text=True, timeout=30)
            print(r.stdout, end="", flush=True)
        r = subprocess.run(["ovs-appctl", "-t", self.ctl, "dpctl/dump-flows"], env=self.env,
                           capture_output=True, text=True, timeout=60)
        log("%d datapath flows" % sum(1 for ln in r.stdout.splitlines() if "actions:" in ln))

    def stop(self):
        if any(n == "ovs-vswitchd" and p.poll() is None for n, p in self.procs):
            try:
                self.report()
            except (OSError, subprocess.TimeoutExpired) as e:
                log("no datapath report: %s" % e)
        for name, p in reversed(self.procs):
            if p.poll() is None:
                if name == "ovs-vswitchd":
                    subprocess.run(["ovs-appctl", "-t", self.ctl, "exit"], env=self.env,
                                   capture_output=True, timeout=30)
                else:
                    p.terminate()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        log_copy = self.a.log_copy
        if log_copy:
            shutil.copy(self.path("ovs-vswitchd.log"), log_copy)
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", required=True, help="DPDK --file-prefix")
    ap.add_argument("--rx", required=True, help="pcap replayed into p0")
    ap.add_argument("--macs", required=True, help="static MAC table: 'MAC p1' lines")
    ap.add_argument("--table-size", type=int, required=True, help="bridge mac-table-size")
    ap.add_argument("--mem", type=int, default=1024, help="EAL -m (MB)")
    ap.add_argument("--cpu", type=int, default=1, help="CPU of the PMD thread")
    ap.add_argument("--log-copy", help="copy ovs-vswitchd.log here at exit")
    args = ap.parse_args()
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sw = Switch(args)
    rc = 0
    try:
        sw.start()
        while not stop and all(p.poll() is None for _, p in sw.procs):
            time.sleep(0.1)
        dead = [n for n, p in sw.procs if p.poll() is not None]
        if dead:
            log("%s exited early" % ", ".join(dead))
            rc = 1
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        log("setup failed: %s" % e)
        rc = 1
    finally:
        sw.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
