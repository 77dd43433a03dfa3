# SPDX-License-Identifier: BSD-3-Clause
"""Run a replay directory through pipefwd and compare with what is expected.

Shared by the project's own replay runner (scripts/replay.py) and the users'
one (`pipefwd-ctl replay`). Python standard library only (scapy, when it is
importable, only makes frame descriptions nicer), so it is installed with
pipefwd-ctl under PREFIX/share/pipefwd.

A replay directory holds:
  topology.yaml    net_pcap ports reading @IN@/<port>.pcap and writing
                   @OUT@/<port>.pcap (@DIR@ or @CASE@: the directory itself)
  in/<port>.pcap   input per port
  expected/<port>.pcap   output expected per port (empty file or absent: none)
  counters.json    {"totals.rx": N, "ports.p1.tx": N, "<stage>.<counter>": N, ...};
                   every drop counter not listed must be zero
"""
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

from pcaplib import read_pcap, write_pcap  # noqa: F401 (read_pcap: for callers)


# ---- pcap ------------------------------------------------------------------

def copy_pcap(src, dst):
    """Copy a pcap's frames into a microsecond pcap (net_pcap writes nanoseconds)."""
    return write_pcap(dst, read_pcap(src) if os.path.exists(src) else [])


def flow_key(data):
    """Flow of a frame: MACs, VLAN, EtherType, IPv4/IPv6 addresses, protocol and ports.

    Replay compares order only within a flow: pipefwd keeps per-flow order,
    not order across flows or ports.
    """
    if len(data) < 14:
        return ("runt", data)
    off = 12
    et = struct.unpack("!H", data[off:off + 2])[0]
    vlan = None
    if et == 0x8100 and len(data) >= 18:
        vlan = struct.unpack("!H", data[14:16])[0] & 0xFFF
        off = 16
        et = struct.unpack("!H", data[off:off + 2])[0]
    l3 = off + 2
    key = [data[0:6], data[6:12], vlan, et]
    if et == 0x0800 and len(data) >= l3 + 20:
        ihl = (data[l3] & 0xF) * 4
        proto = data[l3 + 9]
        key += [data[l3 + 12:l3 + 16], data[l3 + 16:l3 + 20], proto]
        frag = struct.unpack("!H", data[l3 + 6:l3 + 8])[0] & 0x1FFF
        if proto in (6, 17) and frag == 0 and len(data) >= l3 + ihl + 4:
            key += [data[l3 + ihl:l3 + ihl + 4]]
    elif et == 0x86DD and len(data) >= l3 + 40:
        key += [data[l3 + 8:l3 + 40], data[l3 + 6]]
    return tuple(key)


def describe(data):
    """One line for a frame: scapy's summary when scapy is there, else the fields."""
    try:
        from scapy.all import Ether
        return Ether(data).summary().strip()
    except Exception:  # noqa: BLE001 - scapy missing or the frame confuses it
        pass
    if len(data) < 14:
        return "runt frame %s" % data.hex()
    mac = lambda b: ":".join("%02x" % x for x in b)  # noqa: E731
    s = "%s > %s" % (mac(data[6:12]), mac(data[0:6]))
    key = flow_key(data)
    if key[3] == 0x0800 and len(key) > 6:
        s += " IPv4 %s > %s proto %d" % (".".join(str(x) for x in key[4]),
                                         ".".join(str(x) for x in key[5]), key[6])
        if len(key) > 7:
            s += " ports %d > %d" % struct.unpack("!HH", key[7])
    else:
        s += " type 0x%04x" % key[3]
    return s + " (%d bytes)" % len(data)


# ---- comparing --------------------------------------------------------------

def port_diff(got, want):
    """Missing and extra frames (Counters of bytes -> count) and the flows whose
    common frames left in another order (list of first frames)."""
    cg, cw = collections.Counter(got), collections.Counter(want)
    missing, extra = cw - cg, cg - cw
    common = cg & cw

    def in_common(seq):
        left, out = collections.Counter(common), collections.defaultdict(list)
        for d in seq:
            if left[d] > 0:
                left[d] -= 1
                out[flow_key(d)].append(d)
        return out

    fg, fw = in_common(got), in_common(want)
    reordered = [seq[0] for key, seq in fw.items() if fg[key] != seq]
    return missing, extra, reordered


def port_errors(port, got, want, limit=5):
    """port_diff as messages: '<port>: missing 1x ...', 'unexpected', 'reordered'."""
    missing, extra, reordered = port_diff(got, want)
    errors = []
    for data, n in list(missing.items())[:limit]:
        errors.append(f"{port}: missing {n}x {describe(data)}")
    for data, n in list(extra.items())[:limit]:
        errors.append(f"{port}: unexpected {n}x {describe(data)}")
    for data in reordered[:limit]:
        errors.append(f"{port}: flow {describe(data)} reordered")
    if missing or extra:
        errors.append(f"{port}: got {len(got)} frames, expected {len(want)}")
    return errors


def group_of(stage):
    """"acl" for an instance "acl.1", else the stage name itself."""
    base, _, k = stage.rpartition(".")
    return base if base and k.isdigit() else stage


def stage_value(st, name, rest):
    for section in ("drops", "counters", "gauges", "edges"):
        if rest in st.get(section, {}):
            return st[section][rest]
    if rest in st:
        return st[rest]
    raise KeyError(f"stage {name} has no counter {rest}")


def lookup(stats, key):
    """Value of "stage.counter", "ports.p0.tx" or "totals.x" in the stats JSON."""
    head, _, rest = key.partition(".")
    if head in ("totals", "ports", "rings"):
        node = stats[head]
        for part in rest.split(".") if head != "rings" else [rest.rsplit(".", 1)[0],
                                                               rest.rsplit(".", 1)[1]]:
            node = node[part]
        return node
    # Stage names may hold dots (instances: "acl.0"); the longest stage name
    # wins, and a stage with instances ("acl") sums its instances.
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        name, rest = ".".join(parts[:i]), ".".join(parts[i:])
        if name in stats["stages"]:
            return stage_value(stats["stages"][name], name, rest)
        members = [s for s in stats["stages"] if group_of(s) == name and s != name]
        if members:
            return sum(stage_value(stats["stages"][m], m, rest) for m in members)
    raise KeyError(f"no stage {head}")


def counter_diffs(stats, want):
    """(key, expected, got) for every counter of @want that differs, and every
    drop counter not listed in @want that is not zero (expected 0)."""
    diffs = []
    for key, value in sorted(want.items()):
        try:
            got = lookup(stats, key)
        except KeyError as e:
            diffs.append((key, value, "absent (%s)" % str(e).strip("'\"")))
            continue
        if got != value:
            diffs.append((key, value, got))
    for sname, st in stats["stages"].items():
        for reason, v in st["drops"].items():
            if v != 0 and f"{sname}.{reason}" not in want and \
                    f"{group_of(sname)}.{reason}" not in want:
                diffs.append((f"{sname}.{reason}", 0, v))
    return diffs


def run_errors(stats):
    """What must hold after every run: nothing unaccounted, no mbuf leaked."""
    errors = []
    if stats["totals"]["unaccounted"] != 0:
        errors.append(f"unaccounted packets: {stats['totals']}")
    if stats.get("mbufs_in_use_after_stop", 0) != 0:
        errors.append(f"mbufs leaked: {stats['mbufs_in_use_after_stop']}")
    return errors


def record_counters(stats, out_ports):
    """The counters --record writes: totals, each output port's tx and every
    drop counter that is not zero (all others must then stay zero)."""
    ctrs = {"totals.%s" % k: stats["totals"][k] for k in ("rx", "tx", "dropped")}
    for p in out_ports:
        if p in stats["ports"]:
            ctrs["ports.%s.tx" % p] = stats["ports"][p]["tx"]
    for sname, st in stats["stages"].items():
        for reason, v in st["drops"].items():
            if v:
                ctrs["%s.%s" % (sname, reason)] = v
    return ctrs


# ---- running ----------------------------------------------------------------

def topology_ports(case_dir):
    """Ports the topology reads from @IN@/<port>.pcap and writes to @OUT@/<port>.pcap."""
    text = open(os.path.join(case_dir, "topology.yaml")).read()
    ins = re.findall(r"@IN@/([\w.-]+)\.pcap", text)
    outs = re.findall(r"@OUT@/([\w.-]+)\.pcap", text)
    return ins, outs


def runtime_dir(prefix):
    """EAL's runtime dir for @prefix (eal_create_runtime_dir)."""
    base = "/var/run" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def lossless(topo, want_ctrs):
    """Run the case lossless (runtime.backpressure: a stage takes only what the
    rings after it hold), so a replay is complete however the machine
    schedules the lcores; unless the case sets backpressure itself or expects
    ring_full drops (it then tests the overflow)."""
    if "backpressure" in topo or any(k.endswith("ring_full") for k in want_ctrs):
        return topo
    m = re.search(r"^runtime:[ \t]*\{", topo, re.M)
    if m:
        return topo[:m.end()] + " backpressure: true," + topo[m.end():]
    m = re.search(r"^runtime:[ \t]*\n", topo, re.M)
    if m:
        return topo[:m.end()] + "  backpressure: true\n" + topo[m.end():]
    return topo.rstrip("\n") + "\nruntime: { backpressure: true }\n"


def run_pipefwd(case_dir, out_dir, pipefwd, prefix, idle_ms=500, timeout=120, want_ctrs=None):
    """Run pipefwd on @case_dir's topology (placeholders filled in) until its
    inputs are replayed. Returns (returncode, stderr, stats or None, seconds).
    With @want_ctrs (the expected counters) the run is lossless (lossless()).

    The filled-in topology is written beside the original for the run, so
    relative table paths in it resolve as they do for the original."""
    case_dir = os.path.abspath(case_dir)
    topo = open(os.path.join(case_dir, "topology.yaml")).read()
    topo = (topo.replace("@IN@", os.path.join(case_dir, "in")).replace("@OUT@", out_dir)
            .replace("@CASE@", case_dir).replace("@DIR@", case_dir))
    if want_ctrs is not None:
        topo = lossless(topo, want_ctrs)
    topo_path = os.path.join(case_dir, f".run-{os.getpid()}.yaml")
    with open(topo_path, "w") as f:
        f.write(topo)
    stats_path = os.path.join(out_dir, ".stats.json")
    cmd = [pipefwd, "-q", "-i", str(idle_ms), "-j", stats_path, topo_path, "--",
           f"--file-prefix={prefix}"]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        rc, err = -1, f"pipefwd did not finish within {timeout} s"
    finally:
        os.unlink(topo_path)
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)
    dt = time.time() - t0
    stats = None
    if os.path.exists(stats_path):
        with open(stats_path) as f:
            stats = json.load(f)
        os.unlink(stats_path)
    return rc, err, stats, dt


def scratch_dir(name):
    return tempfile.mkdtemp(prefix=f"replay-{name}-")
