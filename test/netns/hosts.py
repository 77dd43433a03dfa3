#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Real hosts on one subnet behind pipefwd's bridge over net_tap: a stateful ACL, an L2 bridge.

    /usr/bin/python3 test/netns/hosts.py --pipefwd build/app/pipefwd acl|bridge

Host A (10.5.0.1/24) sits on port p0, host B (10.5.0.2/24) on p1; each host
sets a MAC of its own on its tap (the tap inherits the port's MAC, which rx
would drop as l2_src_is_own_mac) and nothing else but its address.

acl: rx -ipv4-> acl -> l2fib -> tx (ARP straight to l2fib). One rule,
`permit-reflect src 10.5.0.1 dst 10.5.0.2 proto tcp dport 5001`, default
deny. A connects to B's port 5001 and B sends 10 MB back over the session
(sha256 compared at both ends), A uploads 10 MB to B the same way; B's connect to
a port A listens on gets no answer within 3 s (timeout, not refused: its SYN
never reaches A). At exit the acl stage counts session_created >= 2 and
acl_deny >= 1.

bridge: rx -> l2fib -> tx (every class bridged). ping both ways with 0%
loss, 10 MB of TCP each way with the sha256 compared, `pipefwd-ctl macs` lists both
host MACs learned on their ports.

Both end with SIGINT and the accounting line exact. Namespaces are named
PF_NETNS_PREFIX (env, default "pfho" + 4 hex digits of the pid) + a/b and deleted at the end; traffic
never leaves them. Needs root, ip, ping: skipped (exit 77) without.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import router  # noqa: E402  (namespace helpers, retargeted to these namespaces)
from multiqueue import stop  # noqa: E402
from router import TCP_BYTES, TCP_RECV, TCP_SEND, cleanup, ns, sh, start_pipefwd, wait_link  # noqa: E402

PFX = os.environ.get("PF_NETNS_PREFIX", "pfho%04x" % (os.getpid() & 0xffff))
FILE_PREFIX = os.environ.get("PF_FILE_PREFIX", PFX + "-hosts")
NS = router.NS = {"a": PFX + "a", "b": PFX + "b"}
TAP = router.TAP = {"a": PFX + "t0", "b": PFX + "t1"}
PORT = {"a": "p0", "b": "p1"}
HOST_MAC = {"a": "02:00:00:0a:05:01", "b": "02:00:00:0b:05:02"}
HOST_IP = {"a": "10.5.0.1", "b": "10.5.0.2"}
OPEN_PORT = 5001        # the port A may open on B
CONNECT_WAIT = 3.0      # seconds B waits for its denied SYN to be answered

TOPO_HEAD = """\
eal: [--no-huge, -m, "512", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_tap0,iface={ta}", mac: "02:00:00:00:05:10" }}
  p1: {{ device: "net_tap1,iface={tb}", mac: "02:00:00:00:05:11" }}
stages:
"""
TOPO = {
    "acl": TOPO_HEAD + """\
  rx: {{ type: rx, ports: [p0, p1], next: {{ ipv4: acl, arp: l2 }} }}
  acl:
    type: acl
    rules: ["permit-reflect src {ia} dst {ib} proto tcp dport {port}"]
    default: deny
    next: l2
  l2: {{ type: l2fib, ports: [p0, p1], next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, acl, l2, tx]
""",
    "bridge": TOPO_HEAD + """\
  rx: {{ type: rx, ports: [p0, p1], next: l2 }}
  l2: {{ type: l2fib, ports: [p0, p1], next: tx }}
  tx: {{ type: tx, ports: [p0, p1] }}
lcores:
  1: [rx, l2, tx]
""",
}

# The server end that sends: B answers A's connection with data.
TCP_SERVE = """\
import hashlib, os, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); s.settimeout(30)
c, _ = s.accept(); c.settimeout(30); n, h, sent = int(sys.argv[2]), hashlib.sha256(), 0
while sent < n:
    b = os.urandom(min(65536, n - sent)); c.sendall(b); h.update(b); sent += len(b)
c.close()
print(sent, h.hexdigest())
"""
TCP_FETCH = """\
import hashlib, socket, sys, time
for k in range(50):
    try:
        s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
        break
    except OSError:
        time.sleep(0.1)
h, n = hashlib.sha256(), 0
while True:
    b = s.recv(65536)
    if not b:
        break
    h.update(b); n += len(b)
print(n, h.hexdigest())
"""
# One connection attempt: prints connected, timeout or the error.
TCP_TRY = """\
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3]))
    print("connected")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("error", e)
"""
SCRIPTS = {"tcp_recv.py": TCP_RECV, "tcp_send.py": TCP_SEND, "tcp_serve.py": TCP_SERVE,
           "tcp_fetch.py": TCP_FETCH, "tcp_try.py": TCP_TRY}


def setup_host(h):
    sh("ip", "link", "set", TAP[h], "netns", NS[h])
    ns(h, "ip", "link", "set", TAP[h], "address", HOST_MAC[h])
    ns(h, "ip", "addr", "add", HOST_IP[h] + "/24", "dev", TAP[h])
    ns(h, "ip", "link", "set", TAP[h], "up")
    ns(h, "ip", "link", "set", "lo", "up")


def fetch(tmp, errors):
    """A connects to B, B sends TCP_BYTES back: both print "bytes sha256", they must match."""
    srv = subprocess.Popen(["ip", "netns", "exec", NS["b"], "/usr/bin/python3",
                            os.path.join(tmp, "tcp_serve.py"), str(OPEN_PORT), str(TCP_BYTES)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        got = ns("a", "/usr/bin/python3", os.path.join(tmp, "tcp_fetch.py"), HOST_IP["b"],
                 str(OPEN_PORT), timeout=60, check=False).split()
        sent = srv.communicate(timeout=30)[0].split()
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        errors.append("TCP opened by A, data from B: no end within the time limit")
        return
    if len(sent) != 2 or sent != got or sent[0] != str(TCP_BYTES):
        errors.append(f"TCP opened by A, data from B: B sent {sent}, A received {got}")


def checks_acl(errors, tmp):
    # A opens, B sends the data back over A's session; then A uploads.
    fetch(tmp, errors)
    router.tcp_transfer("a", "b", HOST_IP["b"], OPEN_PORT, tmp, errors)
    # B towards a port A listens on: the SYN is denied, so no answer at all.
    lsn = subprocess.Popen(["ip", "netns", "exec", NS["a"], "/usr/bin/python3",
                            os.path.join(tmp, "tcp_recv.py"), str(OPEN_PORT + 1)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = ns("b", "/usr/bin/python3", os.path.join(tmp, "tcp_try.py"), HOST_IP["a"],
                 str(OPEN_PORT + 1), str(CONNECT_WAIT), timeout=CONNECT_WAIT + 10,
                 check=False).strip()
        if out != "timeout":
            errors.append(f"B's connect to A port {OPEN_PORT + 1}: {out} (want timeout)")
    finally:
        lsn.kill()
        lsn.wait()


def checks_bridge(errors, tmp):
    for h, o in (("a", "b"), ("b", "a")):
        out = ns(h, "ping", "-c", "5", "-i", "0.2", "-W", "2", HOST_IP[o], timeout=15,
                 check=False)
        if " 0% packet loss" not in out:
            errors.append(f"ping {h} -> {o} lost packets:\n" + out)
    router.tcp_transfer("a", "b", HOST_IP["b"], 5001, tmp, errors)
    router.tcp_transfer("b", "a", HOST_IP["a"], 5002, tmp, errors)
    out = sh("/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                              "..", "scripts", "pipefwd-ctl"),
             "--file-prefix", FILE_PREFIX, "macs", "l2", check=False)
    for h in ("a", "b"):
        if re.search(re.escape(HOST_MAC[h]) + r"\s+" + PORT[h] + r"\s.*learned", out) is None:
            errors.append(f"pipefwd-ctl macs does not show {HOST_MAC[h]} learned on "
                          f"{PORT[h]}:\n{out}")


def check_acl_counters(st, errors):
    acl = st.get("stages", {}).get("acl", {})
    cnt, drops = acl.get("counters", {}), acl.get("drops", {})
    print("acl:", json.dumps({"counters": cnt, "drops": drops}, sort_keys=True))
    if cnt.get("session_created", 0) < 2:
        errors.append("acl counted fewer than 2 session_created")
    if drops.get("acl_deny", 0) < 1:
        errors.append("acl counted no acl_deny")


def stop_exact(proc, errors):
    """SIGINT (multiqueue.stop), then pipefwd's exit status and accounting line."""
    out = stop(proc, errors)
    if proc.returncode != 0:
        errors.append(f"pipefwd exited {proc.returncode}")
    if re.search(r"unaccounted 0 \(", out) is None:
        errors.append("accounting line not exact")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipefwd", required=True)
    ap.add_argument("mode", choices=sorted(TOPO))
    args = ap.parse_args()
    if os.geteuid() != 0 or any(shutil.which(t) is None for t in ("ip", "ping")):
        print("SKIP: needs root, ip, ping (scripts/deps.sh)")
        return 77
    t_start = time.monotonic()
    errors = []
    tmp = tempfile.mkdtemp(prefix="pf-netns-hosts-")
    topo, stats = os.path.join(tmp, "hosts.yaml"), os.path.join(tmp, "stats.json")
    with open(topo, "w") as f:
        f.write(TOPO[args.mode].format(ta=TAP["a"], tb=TAP["b"], ia=HOST_IP["a"],
                                       ib=HOST_IP["b"], port=OPEN_PORT))
    for name, text in SCRIPTS.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    cleanup()
    proc, out = None, ""
    try:
        for h in NS:
            sh("ip", "netns", "add", NS[h])
        proc, out = start_pipefwd([args.pipefwd, "-j", stats, topo, "--",
                                   f"--file-prefix={FILE_PREFIX}"])
        for h in NS:
            wait_link(TAP[h])
            setup_host(h)
        (checks_acl if args.mode == "acl" else checks_bridge)(errors, tmp)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        errors.append(str(e))
    finally:
        if proc is not None:
            out += stop_exact(proc, errors)
        cleanup()
        shutil.rmtree(f"/var/run/dpdk/{FILE_PREFIX}", ignore_errors=True)
    if args.mode == "acl":
        try:
            with open(stats) as f:
                check_acl_counters(json.load(f), errors)
        except (OSError, ValueError):
            errors.append("no stats JSON written")
    shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        print("FAIL:", e)
    if errors:
        print(out)
        return 1
    what = {"acl": f"A opens TCP to B:{OPEN_PORT} and gets the data back (sha256), uploads too, "
                   "B's connect to A times out, session_created and acl_deny counted",
            "bridge": "ping both ways 0% loss, TCP sha256 both ways, both host MACs learned"}
    print(f"PASS netns hosts {args.mode}: {what[args.mode]}, accounting exact "
          f"({time.monotonic() - t_start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
