#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Install into a DESTDIR under a temp dir and run what was installed:
pipefwd --version, --check on the installed example topology, pipefwd-ctl
--help, the man pages, the systemd unit, sd_notify READY/RELOADING/STOPPING
(when built with libsystemd) and pipefwd-ctl replay from the install.

usage: test_install.py BUILD_DIR
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
from pftest import XC_TOPOLOGY, finish, numbered_udp, write_pcap  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
TAG = "install_t%d" % os.getpid()
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 60),
                          **kw)


def notify_run(pipefwd, tmp):
    """READY=1 after start, RELOADING=1 then READY=1 around a SIGHUP reload,
    STOPPING=1 on SIGTERM, read from our own $NOTIFY_SOCKET."""
    write_pcap(os.path.join(tmp, "n.pcap"), [numbered_udp(i) for i in range(64)])
    topo = os.path.join(tmp, "n.yaml")
    with open(topo, "w") as f:
        f.write(XC_TOPOLOGY.format(pcap=os.path.join(tmp, "n.pcap"), infinite=",infinite_rx=1"))
    path = os.path.join(tmp, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(20)
    env = dict(os.environ, NOTIFY_SOCKET=path)
    proc = subprocess.Popen([pipefwd, "-q", topo, "--", "--file-prefix=" + TAG], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    got = []

    def expect(word):
        while True:
            try:
                msg = sock.recv(4096).decode()
            except socket.timeout:
                return check(False, "sd_notify: no %s (got %r)" % (word, got))
            got.append(msg)
            if word in msg.split("\n"):
                return True

    try:
        if expect("READY=1"):
            proc.send_signal(signal.SIGHUP)
            if expect("RELOADING=1"):
                check(any(l.startswith("MONOTONIC_USEC=") for l in got[-1].split("\n")),
                      "RELOADING=1 without MONOTONIC_USEC: %r" % got[-1])
                expect("READY=1")
        proc.send_signal(signal.SIGTERM)
        expect("STOPPING=1")
        rc = proc.wait(30)
        check(rc == 0, "notify run: pipefwd exit %d: %s" % (rc, proc.stderr.read()[-1000:]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sock.close()
        rundir = "/var/run/dpdk/" + TAG if os.geteuid() == 0 else \
            os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", TAG)
        shutil.rmtree(rundir, ignore_errors=True)


def main():
    tmp = tempfile.mkdtemp(prefix="pf_install_")
    dest = os.path.join(tmp, "dest")
    r = run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", dest],
            timeout=120)
    if not check(r.returncode == 0, "meson install: %s%s" % (r.stdout, r.stderr)):
        finish(errors, tmp)
    installed = json.loads(run(["meson", "introspect", "--installed", BUILD]).stdout)
    version = json.loads(run(["meson", "introspect", "--projectinfo", BUILD]).stdout)["version"]
    where = {}
    for target in installed.values():
        where[os.path.basename(target)] = target
        check(os.path.exists(dest + target), "not installed: %s" % target)
    for name in ("pipefwd", "pipefwd-ctl", "pipefwd.8", "pipefwd-ctl.8", "pipefwd.yaml",
                 "pipefwd.service", "replaycmp.py", "pcaplib.py", "pftop.py"):
        check(name in where, "meson installs no %s" % name)
    if errors:
        finish(errors, tmp)
    pipefwd, ctl = dest + where["pipefwd"], dest + where["pipefwd-ctl"]
    example = dest + where["pipefwd.yaml"]
    check(os.path.dirname(where["pipefwd.yaml"]).endswith("/etc/pipefwd"),
          "example topology at %s, not under SYSCONFDIR/pipefwd" % where["pipefwd.yaml"])

    r = run([pipefwd, "--version"])
    first = r.stdout.split("\n")[0]
    check(r.returncode == 0 and first == "pipefwd " + version,
          "--version: rc %d %r (project version %s)" % (r.returncode, r.stdout, version))
    notify = "systemd notify yes" in r.stdout
    r = run([pipefwd, "--check", example])
    check(r.returncode == 0 and ": ok:" in r.stdout,
          "--check installed example: %d %s%s" % (r.returncode, r.stdout, r.stderr))
    r = run([ctl, "--help"])
    check(r.returncode == 0 and "replay" in r.stdout and "top" in r.stdout,
          "pipefwd-ctl --help: %d %s" % (r.returncode, r.stderr))
    for page in ("pipefwd.8", "pipefwd-ctl.8"):
        r = run(["man", "--warnings", "-l", dest + where[page]], env=dict(os.environ,
                MANWIDTH="80"))
        text = re.sub(".\b", "", r.stdout)      # overstrike bold/underline off a tty
        check(r.returncode == 0 and "SYNOPSIS" in text and not r.stderr.strip(),
              "man %s: %d %r" % (page, r.returncode, r.stderr))
        check(version in text, "man %s does not carry version %s" % (page, version))

    unit = open(dest + where["pipefwd.service"]).read()
    check("ExecReload=/bin/kill -HUP $MAINPID" in unit, "unit: no SIGHUP reload")
    check("ExecStart=%s %s\n" % (where["pipefwd"], where["pipefwd.yaml"]) in unit,
          "unit: ExecStart does not run the installed binary on the installed topology")
    check(("Type=notify" if notify else "Type=simple") in unit,
          "unit type does not match the build (notify %s)" % notify)
    if notify:
        notify_run(pipefwd, tmp)
    else:
        print("SKIP: built without libsystemd: no sd_notify check")

    # the installed pipefwd-ctl replays with the installed replaycmp and pipefwd
    case = os.path.join(tmp, "passthrough")
    shutil.copytree(os.path.join(ROOT, "test", "replay", "passthrough"), case,
                    ignore=shutil.ignore_patterns("case.py", "__pycache__"))
    r = run([ctl, "replay", case], cwd=tmp, timeout=120)
    check(r.returncode == 0 and "PASS" in r.stdout,
          "installed replay: %d %s%s" % (r.returncode, r.stdout, r.stderr))
    print("installed pipefwd %s (notify %s) into %s" % (version, notify, dest))
    finish(errors, tmp)


if __name__ == "__main__":
    main()
