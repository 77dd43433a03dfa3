#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run a unit's ExecStart inside the sandbox its [Service] section asks for,
as far as that can be done without systemd (this machine's PID 1 is not
systemd): the test of the hardened units (test_install.py) starts pipefwd
this way.

  sandbox.py UNIT INSTANCE DESTDIR PREFIX [-- EXTRA ARGS]

UNIT is the unit's installed path (PREFIX/lib/systemd/system/...), DESTDIR
where `meson install --destdir` put it: DESTDIR/PREFIX is bind-mounted on
PREFIX first, so the sandboxed pipefwd sees the install at its real paths
(and PrivateTmp does not hide a DESTDIR under /tmp).

Done as systemd does it: a private mount namespace (PrivateMounts) in which
every mount is read-only but /dev, /proc, /sys (ProtectSystem=strict), /proc/sys
and /sys read-only too (ProtectKernelTunables), empty /home, /root, /run/user
(ProtectHome), fresh /tmp and /var/tmp (PrivateTmp), /run/RuntimeDirectory
writable (created 0700, RuntimeDirectoryMode), ReadWritePaths writable; the
capability bounding set (CapabilityBoundingSet, no inheritable or ambient
ones), NoNewPrivileges, UMask; a seccomp filter (python3-seccomp) with
SystemCallFilter's groups expanded by `systemd-analyze syscall-filter`,
SystemCallErrorNumber, SystemCallArchitectures=native, RestrictAddressFamilies
(socket's family), RestrictNamespaces (unshare, setns, clone with CLONE_NEW*),
MemoryDenyWriteExecute (W+X mmap, X mprotect), RestrictRealtime. Not done:
DevicePolicy/DeviceAllow (a cgroup's device list), IPAddressDeny (cgroup
BPF), ProtectProc, ProtectClock/Hostname/KernelModules/KernelLogs (they only
remove syscalls pipefwd does not make, or capabilities it does not have).
The whole runs in a new network namespace (the caller's unshare -n), so a
topology's TAPs never appear on the machine.

A second stage, `sandbox.py --exec UNIT_FILE -- ARGV`, installs the seccomp
filter and execs ARGV (setpriv runs it, after dropping capabilities).
"""
import functools
import os
import re
import subprocess
import sys

# The second stage runs this script's text, not its path: under PrivateTmp a
# checkout in /tmp (a clean clone there) is hidden by the time it starts.
SOURCE = open(__file__).read() if "__file__" in globals() else None


def service(text, instance):
    """{key: [values]} of the [Service] section, %i expanded."""
    out, inside = {}, False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line == "[Service]"
            continue
        if not inside or not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out.setdefault(k, []).append(v.replace("%i", instance))
    return out


@functools.lru_cache(None)
def syscalls(group):
    """The system calls of a systemd group (@name), nested groups expanded."""
    if not group.startswith("@"):
        return frozenset([group])
    lines = subprocess.run(["systemd-analyze", "syscall-filter", group], capture_output=True,
                           text=True, check=True).stdout.splitlines()[1:]
    names = set()
    for l in (x.strip() for x in lines):
        if l and not l.startswith("#"):
            names |= syscalls(l)
    return frozenset(names)


def filter_set(svc):
    allow = set()
    for v in svc.get("SystemCallFilter", []):
        words = v.split()
        if words and words[0].startswith("~"):
            for w in [words[0][1:]] + words[1:]:
                allow -= syscalls(w)
        else:
            for w in words:
                allow |= syscalls(w)
    return allow


def install_seccomp(svc):
    import errno
    import seccomp
    err = getattr(errno, svc.get("SystemCallErrorNumber", ["EPERM"])[-1])
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(err))
    special = {"socket", "socketpair", "unshare", "setns", "clone", "clone3", "mmap",
               "mprotect", "sched_setscheduler", "sched_setattr"}
    allow = filter_set(svc)
    for name in sorted(allow - special):
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (RuntimeError, ValueError, OSError):
            pass        # a name this architecture does not have
    fams = [getattr(__import__("socket"), a, None) or {"AF_XDP": 44}.get(a)
            for a in " ".join(svc.get("RestrictAddressFamilies", [])).split()]
    for call in ("socket", "socketpair"):
        if call in allow:
            if fams:
                for fam in fams:
                    f.add_rule(seccomp.ALLOW, call, seccomp.Arg(0, seccomp.EQ, int(fam)))
            else:
                f.add_rule(seccomp.ALLOW, call)
    ns = svc.get("RestrictNamespaces", ["no"])[-1] == "yes"
    newns = 0x7E020080      # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
    if "clone" in allow:
        f.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, newns, 0)
                   if ns else seccomp.Arg(0, seccomp.MASKED_EQ, 0, 0))
    if "clone3" in allow:
        if ns:
            f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")    # as systemd: glibc falls back
        else:
            f.add_rule(seccomp.ALLOW, "clone3")
    for call in ("unshare", "setns"):
        if call in allow and not ns:
            f.add_rule(seccomp.ALLOW, call)
    mdwe = svc.get("MemoryDenyWriteExecute", ["no"])[-1] == "yes"
    # MemoryDenyWriteExecute: mmap with PROT_WRITE and PROT_EXEC, mprotect to PROT_EXEC refused
    if "mmap" in allow:
        for v in ((0x0, 0x2, 0x4) if mdwe else (None,)):
            f.add_rule(seccomp.ALLOW, "mmap", *([seccomp.Arg(2, seccomp.MASKED_EQ, 0x6, v)]
                                               if v is not None else []))
    if "mprotect" in allow:
        f.add_rule(seccomp.ALLOW, "mprotect", *([seccomp.Arg(2, seccomp.MASKED_EQ, 0x4, 0)]
                                               if mdwe else []))
    rt = svc.get("RestrictRealtime", ["no"])[-1] == "yes"
    for call in ("sched_setscheduler",):
        if call in allow:
            if rt:
                for pol in (0, 3, 5):       # SCHED_OTHER, BATCH, IDLE
                    f.add_rule(seccomp.ALLOW, call, seccomp.Arg(1, seccomp.EQ, pol))
            else:
                f.add_rule(seccomp.ALLOW, call)
    if "sched_setattr" in allow and not rt:
        f.add_rule(seccomp.ALLOW, "sched_setattr")
    f.load()


def sh(*cmd):
    subprocess.run(cmd, check=True)


def mounts(svc, runtime):
    """The file system as the unit asks for it (we are in a private mount namespace)."""
    for d in runtime:
        os.makedirs(d, mode=0o700, exist_ok=True)
        os.chmod(d, int(svc.get("RuntimeDirectoryMode", ["0755"])[-1], 8))
    rw = runtime + [p.lstrip("-") for v in svc.get("ReadWritePaths", []) for p in v.split()]
    rw = [p for p in rw if os.path.exists(p)]
    for p in rw:
        sh("mount", "--bind", p, p)
    if svc.get("ProtectSystem", ["no"])[-1] == "strict":
        points = []
        for line in open("/proc/self/mountinfo"):
            mp = line.split()[4].replace("\\040", " ")
            if not re.match(r"^/(dev|proc|sys)(/|$)", mp) and mp not in rw:
                points.append(mp)
        for mp in sorted(points, key=len):
            subprocess.run(["mount", "-o", "remount,bind,ro", mp], capture_output=True)
    if svc.get("ProtectKernelTunables", ["no"])[-1] == "yes":
        for p in ("/proc/sys", "/sys"):
            sh("mount", "--bind", p, p)
            sh("mount", "-o", "remount,bind,ro", p)
    if svc.get("PrivateTmp", ["no"])[-1] == "yes":
        for p in ("/tmp", "/var/tmp"):
            sh("mount", "-t", "tmpfs", "-o", "mode=1777", "tmpfs", p)
    if svc.get("ProtectHome", ["no"])[-1] == "yes":
        for p in ("/home", "/root", "/run/user"):
            if os.path.isdir(p):
                sh("mount", "-t", "tmpfs", "-o", "ro,mode=0755", "tmpfs", p)


def main():
    if sys.argv[1] == "--exec":
        svc = service(open(sys.argv[2]).read(), sys.argv[3])
        argv = sys.argv[sys.argv.index("--") + 1:]
        os.umask(int(svc.get("UMask", ["0022"])[-1], 8))
        install_seccomp(svc)
        os.execv(argv[0], argv)
    unit, instance, dest, prefix = sys.argv[1:5]
    extra = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    sh("mount", "--make-rprivate", "/")
    os.makedirs(prefix, exist_ok=True)
    sh("mount", "--bind", dest + prefix, prefix)
    svc = service(open(unit).read(), instance)
    argv = svc["ExecStart"][-1].split()
    runtime = ["/run/" + d for v in svc.get("RuntimeDirectory", []) for d in v.split()]
    mounts(svc, runtime)
    caps = [c.lower().replace("cap_", "+") for v in svc.get("CapabilityBoundingSet", [])
            for c in v.split()]
    setpriv = ["setpriv", "--inh-caps=-all", "--bounding-set=-all" + "".join("," + c for c in caps)]
    if svc.get("NoNewPrivileges", ["no"])[-1] == "yes":
        setpriv.append("--no-new-privs")
    os.execvp("setpriv", setpriv + ["/usr/bin/python3", "-c", SOURCE, "--exec", unit, instance, "--"] +
              argv + extra)


if __name__ == "__main__":
    main()
