#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""acl-match (/pipefwd/acl_match, pipefwd-ctl acl-match) against an independent model.

A running pipefwd with two acl stages: `acl` from a rules file of 240 random
rules (IPv4 and IPv6, prefixes, port ranges, protocols, priorities, comment
lines so that rule numbers and file lines differ, one permit-reflect rule),
stateful; `acl2` with inline rules, stateless. A finite pcap of LAN flows
opens sessions through the permit-reflect rule. Then 400 random flows (ports,
portless protocols, non-first fragments, both families) are matched, and for
each the expected answer comes from scripts/acl_model.py (a linear scan of
the rules as text, and its own session table fed with the same frames): the
session, or the rule number, its file:line as the generator wrote it, its
action, the edge and the counter. The stage's counters and rule hits must
not move (a lookup is read-only), and a reload that puts a new rule first
is followed at once.

usage: test_acl_match.py PIPEFWD PIPEFWD_CTL
"""
import ipaddress
import json
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import traceback

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ICMP, IP, IPv6, TCP, UDP, Ether, Raw, raw  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import acl_model  # noqa: E402
from pftest import Ctl, dpdk_rundir, finish, stop_pipefwd, telemetry, write_pcap  # noqa: E402

PIPEFWD, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
PREFIX = "acl_match_%d" % os.getpid()
FAILS = []
RNG = random.Random(3301)

TOPO = """\
eal: [--no-huge, -m, "256", --no-pci, --log-level=lib.eal:warning]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={tmp}/in.pcap" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: acl, ipv6: acl }} }}
  acl: {{ type: acl, rules_file: acl.rules, default: deny, sessions: 1024, next: acl2 }}
  acl2:
    type: acl
    default: permit
    rules:
      - deny proto udp dport 7-9
      - {{ action: deny, src: 10.9.0.0/16, proto: icmp }}
      - permit dst 2001:db8:9::/48 proto tcp priority 3
    next: tx
  tx: {{ type: tx, ports: [p1] }}
lcores:
  1: [rx, acl, acl2, tx]
"""
# acl2's rules as acl_model reads them, and the topology line each is on.
ACL2 = ["deny proto udp dport 7-9", "deny src 10.9.0.0/16 proto icmp",
        "permit dst 2001:db8:9::/48 proto tcp priority 3"]
LAN = "192.168.0.0/24"


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def v4_prefix():
    n = RNG.choice([16, 20, 24, 24, 28, 32])
    a = ipaddress.ip_address("10.%d.%d.%d" % (RNG.randrange(4), RNG.randrange(256),
                                              RNG.randrange(256)))
    return ipaddress.ip_network("%s/%d" % (a, n), strict=False)


def v6_prefix():
    n = RNG.choice([40, 48, 56, 64, 96, 128])
    a = ipaddress.ip_address("2001:db8:%x:%x::%x" % (RNG.randrange(4), RNG.randrange(16),
                                                     RNG.randrange(65536)))
    return ipaddress.ip_network("%s/%d" % (a, n), strict=False)


def ports_word():
    k = RNG.randrange(4)
    if k == 0:
        return None
    lo = RNG.randrange(0, 2000)
    return str(lo) if k == 1 else "%d-%d" % (lo, lo + RNG.randrange(1, 3000))


def gen_rules(n=240):
    """(rules file text, [(rule text, line)]): the rules numbered 1.. in order,
    each with the file line it is on (comments and blank lines between)."""
    # The LAN's flows open sessions: first, and above every priority below.
    lines = ["# acl-match test rules, generated", "permit-reflect src %s priority 100" % LAN]
    for i in range(n):
        if RNG.random() < 0.2:
            lines.append("" if RNG.random() < 0.5 else "# a comment %d" % i)
        v6 = RNG.random() < 0.3
        w = [RNG.choice(["permit", "deny", "deny", "permit"])]
        # At least one address: rules of any address would shadow most others.
        for k in RNG.choice([("src",), ("dst",), ("src", "dst"), ("src", "dst")]):
            w += [k, str(v6_prefix() if v6 else v4_prefix())]
        proto = RNG.choice([None, "tcp", "udp", "udp", "tcp", "icmp", "sctp", "47"])
        if v6 and proto == "icmp":
            proto = "icmpv6"     # an IPv6 rule's ICMP (icmp in one is refused)
        if proto is not None:
            w += ["proto", proto]
        if proto in ("tcp", "udp", "sctp"):
            for k in ("sport", "dport"):
                p = ports_word()
                if p is not None:
                    w += [k, p]
        if RNG.random() < 0.15:
            w += ["priority", str(RNG.randrange(1, 10))]
        lines.append(" ".join(w) + ("   # trailing comment" if RNG.random() < 0.2 else ""))
    rules = [(text.split("#")[0].strip(), ln) for ln, text in enumerate(lines, 1)
             if text.split("#")[0].strip()]
    return "\n".join(lines) + "\n", rules


def lan_frames():
    """LAN hosts' first packets outward: each opens a session through rule 1.
    Returns (frames, [(src, dst, proto, sport, dport)])."""
    eth = Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:10")
    frames, flows = [], []
    for h in range(1, 7):
        c, s = "192.168.0.%d" % (10 + h), "10.%d.%d.%d" % (h % 4, h * 7, h * 11)
        if h % 3 == 0:
            frames.append(eth / IP(src=c, dst=s) / ICMP(id=h) / Raw(b"p"))
            flows.append((c, s, "icmp", 0, 0))
        else:
            l4 = UDP if h % 3 == 1 else TCP
            sp, dp = 3000 + h, 53 if l4 is UDP else 443
            frames.append(eth / IP(src=c, dst=s) / (l4(sport=sp, dport=dp, flags="S")
                                                  if l4 is TCP else l4(sport=sp, dport=dp)) /
                          Raw(b"q"))
            flows.append((c, s, "tcp" if l4 is TCP else "udp", sp, dp))
    return [Ether(raw(f)) for f in frames], flows


PROTOS = {"tcp": 6, "udp": 17, "icmp": 1, "sctp": 132, "gre": 47, "esp": 50, "icmpv6": 58}


def addr_in(net):
    return str(net.network_address + RNG.randrange(min(net.num_addresses, 1 << 20)))


def random_flows(rules, n=400):
    """Flows drawn around the rules' own prefixes and ports, so most rules are reached."""
    out = []
    for _ in range(n):
        r = acl_model.Rule(RNG.choice(rules)[0])
        v6 = r.family == 6 or (r.family is None and RNG.random() < 0.3)
        def pick(net):
            if net is not None and RNG.random() < 0.85:
                return addr_in(net)
            return str(addr_in(v6_prefix() if v6 else v4_prefix()))
        src, dst = pick(r.src), pick(r.dst)
        proto = RNG.choice(["tcp", "udp", "udp", "tcp", "sctp", "icmp", "gre", "esp"])
        if r.proto is not None and RNG.random() < 0.8:
            proto = next((k for k, v in PROTOS.items() if v == r.proto), str(r.proto))
        if v6 and proto == "icmp":
            proto = "icmpv6"
        frag = RNG.random() < 0.08
        sp = RNG.randrange(r.sport[0], r.sport[1] + 1) if RNG.random() < 0.8 else \
            RNG.randrange(65536)
        dp = RNG.randrange(r.dport[0], r.dport[1] + 1) if RNG.random() < 0.8 else \
            RNG.randrange(65536)
        out.append((src, dst, proto, sp, dp, frag))
    return out


def model_tuple(src, dst, proto, sp, dp, frag):
    p = PROTOS.get(proto) or int(proto)
    fam = ipaddress.ip_address(src).version
    s, d = int(ipaddress.ip_address(src)), int(ipaddress.ip_address(dst))
    if frag:
        return s, d, p, None, None, "nonfirst", fam
    if p not in acl_model.PORT_PROTOS:
        return s, d, p, None, None, "none", fam
    return s, d, p, sp, dp, "ports", fam


def expect(model, rules, where, t):
    """What acl-match must say for model tuple @t: (match, rule, file, line, action)."""
    if model.max_sessions and t[5] in ("ports", "none"):
        key, _ = model._key(t)
        if key in model.sessions:
            return "session", None, None, None, "permit"
    i = model.match(t)
    if i is None:
        return "default", None, None, None, model.default
    return "rule", i + 1, where[0], where[1][i], rules[i].action


def match_params(stage, f):
    src, dst, proto, sp, dp, frag = f
    p = [stage, src, dst, proto]
    if PROTOS.get(proto, -1) in acl_model.PORT_PROTOS:
        p += [str(sp), str(dp)]
    if frag:
        p.append("frag")
    return ",".join(p)


def counters(sock, stage):
    s = telemetry(sock, "/pipefwd/stages," + stage)[stage]
    return {k: v for k, v in s.items() if k not in ("cycles", "cycles_per_packet", "busy_pct")}


def run_matches(sock, stage, model, rules, where, flows, label):
    bad = 0
    for f in flows:
        r = telemetry(sock, "/pipefwd/acl_match," + match_params(stage, f))
        t = model_tuple(*f)
        want = expect(model, rules, where, t)
        got = (r.get("match"), r.get("rule"), r.get("file"), r.get("line"), r.get("action"))
        if got[0] != "rule":
            got = got[:1] + (None, None, None) + got[4:]
        if not check(got == want, "%s: %s: got %s, model says %s (%s)" % (
                label, match_params(stage, f), got, want, r)):
            bad += 1
            if bad > 10:
                return
        edge = "drop" if want[4] == "deny" else "out"
        check(r.get("edge") == edge, "%s: %s: edge %s, want %s" % (label, f, r.get("edge"), edge))


def test_matches(tmp, sock, ctl, text_rules, where, lan_flows, model):
    rules = [acl_model.Rule(t) for t, _ in text_rules]
    flows = random_flows(text_rules)
    before = counters(sock, "acl")
    run_matches(sock, "acl", model, rules, where, flows, "acl")
    kinds = {}
    for f in flows:
        k = expect(model, rules, where, model_tuple(*f))[0]
        kinds[k] = kinds.get(k, 0) + 1
    hit = {expect(model, rules, where, model_tuple(*f))[1] for f in flows} - {None}
    print("acl: %d flows: %s, %d distinct rules" % (len(flows), kinds, len(hit)))
    check(len(hit) > 60 and kinds.get("default", 0) > 10, "the flows reach too few rules: %s %d"
          % (kinds, len(hit)))
    # Sessions: both directions of every LAN flow, from the model's table.
    sflows = []
    for c, s, proto, sp, dp in lan_flows:
        sflows += [(c, s, proto, sp, dp, False), (s, c, proto, dp, sp, False)]
    run_matches(sock, "acl", model, rules, where, sflows, "acl session")
    c, s, proto, sp, dp = lan_flows[0]
    r = telemetry(sock, "/pipefwd/acl_match," + match_params("acl", (s, c, proto, dp, sp,
                                                                        False)))
    check(r.get("match") == "session" and r.get("session") == "%s:%d > %s:%d" % (c, sp, s, dp)
          and r.get("counter") == "session_permit",
          "the reply of %s names the session its initiator opened: %s" % (lan_flows[0], r))
    # acl2: inline rules, their lines in the topology file.
    m2 = acl_model.Acl(acl_model.parse_rules("\n".join(ACL2)), default="permit")
    topo = os.path.join(tmp, "topo.yaml")
    lines = open(topo).read().splitlines()
    w2 = (topo, [next(i for i, l in enumerate(lines, 1) if l.strip().startswith("- ") and
                      tag in l) for tag in ("dport 7-9", "10.9.0.0/16", "2001:db8:9::/48")])
    f2 = [("10.1.1.1", "10.2.2.2", "udp", 5, 8, False), ("10.9.1.1", "10.2.2.2", "icmp", 0, 0,
                                                          False),
          ("2001:db8:1::1", "2001:db8:9::5", "tcp", 1, 2, False),
          ("10.1.1.1", "10.2.2.2", "udp", 5, 10, False)]
    run_matches(sock, "acl2", m2, m2.rules, w2, f2, "acl2")
    after = counters(sock, "acl")
    check(before == after, "acl-match moved the stage's counters or hits:\n%s\n%s" % (
        before, after))
    # The command line: text and exit codes.
    r = ctl("acl-match", "acl", s, c, proto, *([str(dp), str(sp)] if proto != "icmp" else []))
    check(r.stdout.startswith("acl: %s" % s) and "session %s" % c in r.stdout and
          "counter session_permit" in r.stdout, "acl-match text: %r" % r.stdout)
    r = ctl("acl-match", "acl2", "10.9.1.1", "10.2.2.2", "icmp")
    check("rule 2 (%s:%d): deny src 10.9.0.0/16" % (topo, w2[1][1]) in r.stdout and
          "edge drop" in r.stdout and "acl_deny" in r.stdout, "acl-match text: %r" % r.stdout)
    ctl.refused(("acl-match", "rx", "1.1.1.1", "2.2.2.2", "icmp"),
                "acl-match works on acl stages (here: acl, acl2)")
    r = telemetry(sock, "/pipefwd/acl_match,rx,1.1.1.1,2.2.2.2,icmp")
    check(r.get("error") == "nothing to match in stage 'rx' (stages that match flows: acl, acl2)",
          "acl_match on rx: %s" % r)
    r = ctl("acl-match", "acl", "1.1.1.1", "2.2.2.2", "tcp", "5", ok=False)
    check(r.returncode == 2 and "both ports" in r.stderr, "acl-match with one port: rc %d %r"
          % (r.returncode, r.stderr))


def main():
    tmp = tempfile.mkdtemp(prefix="pf_aclmatch_")
    proc = None
    try:
        text, rules = gen_rules()
        with open(os.path.join(tmp, "acl.rules"), "w") as f:
            f.write(text)
        frames, lan_flows = lan_frames()
        write_pcap(os.path.join(tmp, "in.pcap"), [raw(p) for p in frames])
        topo = os.path.join(tmp, "topo.yaml")
        with open(topo, "w") as f:
            f.write(TOPO.format(tmp=tmp))
        model = acl_model.Acl(acl_model.parse_rules(text), default="deny", sessions=1024)
        passed = sum(model.packet(p) for p in frames)
        print("model: %d of %d LAN frames pass, %d sessions" % (passed, len(frames),
                                                                 len(model.sessions)))
        check(len(model.sessions) == len(frames), "the LAN frames must each open a session")
        log = open(os.path.join(tmp, "pipefwd.log"), "w")
        proc = subprocess.Popen([PIPEFWD, "-q", "-j", os.path.join(tmp, "run.json"), topo, "--",
                                 "--file-prefix=" + PREFIX], stdout=log, stderr=subprocess.STDOUT)
        sock = os.path.join(dpdk_rundir(PREFIX), "dpdk_telemetry.v2")
        end = time.monotonic() + 60
        rx = -1
        while time.monotonic() < end and rx < len(frames):
            time.sleep(0.2)
            try:
                rx = telemetry(sock, "/pipefwd/totals", timeout=5)["rx"]
            except (OSError, ValueError, TypeError, KeyError):
                pass
        if check(rx == len(frames), "pipefwd read %d of %d frames" % (rx, len(frames))):
            ctl = Ctl(CTL, PREFIX, check)
            test_matches(tmp, sock, ctl, rules, (os.path.join(tmp, "acl.rules"),
                                                 [ln for _, ln in rules]), lan_flows, model)
            test_reload(tmp, sock, proc, text, rules)
    except Exception as e:  # report, and keep the files for a look
        traceback.print_exc()
        FAILS.append("exception: %r" % e)
    finally:
        if proc is not None:
            rc = stop_pipefwd(proc, log, dpdk_rundir(PREFIX))
            check(rc == 0, "pipefwd exited %d" % rc)
            st = json.load(open(os.path.join(tmp, "run.json")))
            check(st["totals"]["unaccounted"] == 0, "unaccounted: %s" % st["totals"])
    finish(FAILS, tmp)


def test_reload(tmp, sock, proc, text, rules):
    """A new rule first: the next lookup follows the reloaded table and lines."""
    gen = telemetry(sock, "/pipefwd/config").get("generation", 0)
    new = "# reloaded\ndeny src 10.0.0.0/8 proto udp dport 53\n" + text
    with open(os.path.join(tmp, "acl.rules.tmp"), "w") as f:
        f.write(new)
    os.replace(os.path.join(tmp, "acl.rules.tmp"), os.path.join(tmp, "acl.rules"))
    proc.send_signal(signal.SIGHUP)
    end = time.monotonic() + 60
    while time.monotonic() < end and \
            telemetry(sock, "/pipefwd/config").get("generation", 0) == gen:
        time.sleep(0.2)
    r = telemetry(sock, "/pipefwd/acl_match,acl,10.1.2.3,10.3.3.3,udp,1000,53")
    check(r.get("match") == "rule" and r.get("rule") == 1 and r.get("line") == 2 and
          r.get("action") == "deny", "after the reload: %s" % r)


if __name__ == "__main__":
    main()
