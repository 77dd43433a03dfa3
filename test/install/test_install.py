#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Install into a DESTDIR under a temp dir and run what was installed:
pipefwd --version, --check on the installed example topology, pipefwd-ctl
--help, the man pages, the systemd units (pipefwd.service and the template
pipefwd@.service: systemd-analyze verify, and systemd-analyze security under
a threshold), sd_notify READY/RELOADING/STOPPING (when built with
libsystemd) and pipefwd-ctl replay from the install. A reinstall into the
same DESTDIR keeps an edited SYSCONFDIR/pipefwd/pipefwd.yaml (issue 33 item
5) and puts it there again once removed.

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
# systemd-analyze security's overall exposure of the units (9.6 UNSAFE before
# issue 33 item 5; 2.4 since): a change that loosens them fails here.
MAX_EXPOSURE = 2.5


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


def reinstall_keeps_edit(dest, etc_yaml):
    """meson install again over an edited topology: kept byte for byte; removed: back."""
    path = dest + etc_yaml
    edited = open(path).read() + "# edited by the operator\n"
    with open(path, "w") as f:
        f.write(edited)
    r = run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", dest],
            timeout=120)
    check(r.returncode == 0 and open(path).read() == edited,
          "a reinstall overwrote the edited %s: %s" % (etc_yaml, r.stdout[-500:]))
    os.unlink(path)
    r = run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", dest],
            timeout=120)
    check(r.returncode == 0 and os.path.exists(path), "a reinstall did not put back %s" % etc_yaml)


def units(dest, where, etc_yaml):
    """Both units parse (systemd-analyze verify, in the DESTDIR as root) and are
    hardened: systemd-analyze security's exposure at most MAX_EXPOSURE."""
    tmpl = open(dest + where["pipefwd@.service"]).read()
    inst = etc_yaml.replace("pipefwd.yaml", "%i.yaml")
    check("ExecStart=%s %s -- --file-prefix=pipefwd-%%i\n" % (where["pipefwd"], inst) in tmpl
          and "RuntimeDirectory=dpdk/pipefwd-%i\n" in tmpl,
          "pipefwd@.service: not one topology and EAL prefix per instance")
    if shutil.which("systemd-analyze") is None:
        check(False, "systemd-analyze missing (Debian's systemd)")
        return
    unitdir = os.path.dirname(where["pipefwd.service"])
    # verify against this machine's units, the commands at their DESTDIR paths
    vdir = os.path.join(dest, "verify")
    os.makedirs(vdir)
    for name in ("pipefwd.service", "pipefwd@.service"):
        with open(os.path.join(vdir, name), "w") as f:
            f.write(open(dest + where[name]).read().replace(
                "=" + where["pipefwd"] + " ", "=" + dest + where["pipefwd"] + " "))
    for name in ("pipefwd.service", "pipefwd@lab.service"):
        r = run(["systemd-analyze", "verify", "--man=no", os.path.join(vdir, name)])
        check(r.returncode == 0 and not r.stderr.strip(),
              "systemd-analyze verify %s: %d %s" % (name, r.returncode, r.stderr))
        r = run(["systemd-analyze", "security", "--offline=true", "--root", dest,
                 "--threshold=%d" % int(MAX_EXPOSURE * 10), os.path.join(unitdir, name)])
        m = re.search(r"Overall exposure level for \S+: ([\d.]+)", r.stdout)
        check(r.returncode == 0 and m is not None and float(m.group(1)) <= MAX_EXPOSURE,
              "systemd-analyze security %s: %s (want <= %.1f): %s" % (
                  name, m.group(1) if m else "?", MAX_EXPOSURE, r.stderr.strip()))
        if m:
            print("systemd-analyze security %s: %s" % (name, m.group(1)))


def hardened_start(dest, where, etc_yaml, prefix):
    """pipefwd@INSTANCE started on the installed example topology (net_tap
    ports) inside the sandbox its unit asks for (sandbox.py: what systemd would
    do, PID 1 here not being systemd), in a network namespace of its own: it
    serves stats, holds exactly the unit's capabilities, no_new_privs and a
    seccomp filter, and stops cleanly on SIGTERM."""
    inst = "svct%d" % os.getpid()
    shutil.copy(dest + etc_yaml, os.path.join(os.path.dirname(dest + etc_yaml), inst + ".yaml"))
    ctl = [dest + where["pipefwd-ctl"], "--file-prefix", "pipefwd-" + inst, "--timeout", "10"]
    rundir = "/run/dpdk/pipefwd-" + inst
    log = open(os.path.join(dest, "..", "hardened.log"), "w+")
    proc = subprocess.Popen(["unshare", "-m", "-n", "--propagation", "private", "/usr/bin/python3",
                             os.path.join(ROOT, "test", "install", "sandbox.py"),
                             where["pipefwd@.service"], inst, dest, prefix],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        cfg = None
        end = time.monotonic() + 60
        while cfg is None and time.monotonic() < end and proc.poll() is None:
            r = run(ctl + ["--json", "config"])
            cfg = json.loads(r.stdout) if r.returncode == 0 else None
            time.sleep(0.3)
        if check(cfg is not None and cfg.get("pid") == proc.pid,
                 "hardened unit: pipefwd did not start (exit %s)" % proc.poll()):
            status = open("/proc/%d/status" % proc.pid).read()
            want = sum(1 << n for n in (12, 13, 14))    # NET_ADMIN, NET_RAW, IPC_LOCK
            check(re.search(r"^CapEff:\s*%016x$" % want, status, re.M) and
                  re.search(r"^NoNewPrivs:\s*1$", status, re.M) and
                  re.search(r"^Seccomp:\s*2$", status, re.M),
                  "hardened unit: not sandboxed: %s" % re.findall(
                      r"^(?:Cap\w+|NoNewPrivs|Seccomp):.*$", status, re.M))
            check(os.stat(rundir).st_mode & 0o777 == 0o700, "runtime directory not 0700")
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(30)
            log.seek(0)
            text = log.read()
            check(rc == 0 and "unaccounted 0 (ok)" in text,
                  "hardened unit: exit %d: %s" % (rc, text[-1500:]))
        else:
            log.seek(0)
            print(log.read()[-3000:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
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
    for source, target in installed.items():
        check(os.path.exists(dest + target), "not installed: %s" % target)
        if not os.path.isdir(source):     # install_subdir's entry is the docs directory
            where[os.path.basename(target)] = target
    for name in ("pipefwd", "pipefwd-ctl", "pipefwd.8", "pipefwd-ctl.8", "pipefwd.yaml",
                 "pipefwd.service", "pipefwd@.service", "replaycmp.py", "pcaplib.py",
                 "pftop.py"):
        check(name in where, "meson installs no %s" % name)
    if errors:
        finish(errors, tmp)
    pipefwd, ctl = dest + where["pipefwd"], dest + where["pipefwd-ctl"]
    opts = {o["name"]: o["value"] for o in json.loads(
        run(["meson", "introspect", "--buildoptions", BUILD]).stdout)}
    etc_yaml = os.path.join(opts["prefix"], opts["sysconfdir"], "pipefwd", "pipefwd.yaml")
    example = dest + etc_yaml
    check(open(example).read() == open(dest + where["pipefwd.yaml"]).read(),
          "%s is not the shipped example %s" % (etc_yaml, where["pipefwd.yaml"]))
    reinstall_keeps_edit(dest, etc_yaml)

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
        # What SEE ALSO points at is there: the docs as installed, man pages of ours or of
        # this machine (issue 32: docs/stats.md and dpdk-telemetry.py(1) were neither).
        roff = open(dest + where[page]).read()
        see = roff[roff.find(".SH SEE ALSO"):].replace("\\-", "-")
        see = see[:see.find("\n.SH", 1)] if "\n.SH" in see[1:] else see
        docs = re.findall(r"(/\S*/doc/pipefwd/[\w./-]*\w/?)", see)
        check(docs, "man %s: SEE ALSO names no installed document" % page)
        for path in docs:
            check(os.path.exists(dest + path), "man %s points at %s: not installed" % (page, path))
        for ref, sec in re.findall(r"^\.BR ([\w.-]+) \((\d)\)", see, re.M):
            ours = "%s.%s" % (ref, sec) in where
            check(ours or run(["man", "-w", sec, ref]).returncode == 0,
                  "man %s points at %s(%s): no such page" % (page, ref, sec))

    unit = open(dest + where["pipefwd.service"]).read()
    check("ExecReload=/bin/kill -HUP $MAINPID" in unit, "unit: no SIGHUP reload")
    check("ExecStart=%s %s\n" % (where["pipefwd"], etc_yaml) in unit,
          "unit: ExecStart does not run the installed binary on the installed topology")
    units(dest, where, etc_yaml)
    hardened_start(dest, where, etc_yaml, opts["prefix"])
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
