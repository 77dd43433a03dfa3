# SPDX-License-Identifier: BSD-3-Clause
"""A plain Python model of the acl stage for replay cases (test/replay/acl_*).

It reads the documented rule text format (docs/stages/acl.md) and decides
packet by packet, in order, with a linear scan and a dict of sessions. It
knows nothing of rte_acl or of the C code: only of the documented behaviour,
which includes where sessions live: a table of `sessions` slots taken in
order and reused first-freed-first, a sweep cursor that checks
`session_sweep` slots after each burst, and a full table that reclaims
expired sessions among the next 256 slots only (not every stale one).
"""
import collections
import ipaddress
import os

from scapy.all import IP, IPv6, TCP, UDP

PROTOS = {"icmp": 1, "tcp": 6, "udp": 17, "gre": 47, "esp": 50, "sctp": 132, "icmpv6": 58}
PORT_PROTOS = (6, 17, 132)
L4_MIN = {6: 20, 17: 8, 132: 12}
TIMEOUTS = {"tcp_established": 86400, "tcp_transient": 120, "udp": 600, "other": 60}


class Rule:
    def __init__(self, line):
        words = line.split("#")[0].split()
        self.action = words[0]
        assert self.action in ("permit", "deny", "permit-reflect"), line
        self.src = None             # None: any address of either family
        self.dst = None
        self.family = None          # 4 or 6 from the addresses; None: both
        self.proto = None
        self.sport = (0, 65535)
        self.dport = (0, 65535)
        self.priority = 0
        for key, val in zip(words[1::2], words[2::2]):
            if key in ("src", "dst"):
                net = None if val == "any" else ipaddress.ip_network(val)
                if net is not None:
                    assert self.family in (None, net.version), line
                    self.family = net.version
                setattr(self, key, net)
            elif key == "proto":
                self.proto = None if val == "any" else PROTOS.get(val, None) or int(val)
            elif key in ("sport", "dport"):
                if val == "any":
                    rng = (0, 65535)
                else:
                    lo, _, hi = val.partition("-")
                    rng = (int(lo), int(hi or lo))
                setattr(self, key, rng)
            elif key == "priority":
                self.priority = int(val)
            else:
                raise ValueError(line)

    def has_ports(self):
        return self.sport != (0, 65535) or self.dport != (0, 65535)


def parse_rules(text):
    return [Rule(l) for l in text.splitlines() if l.split("#")[0].strip()]


IP6_EXT = (0, 43, 60)          # hop-by-hop, routing, destination options
IP6_FRAG = 44


def ipv6_upper(ip6):
    """(proto, upper-layer bytes or None for a non-first fragment) of an IPv6
    packet: the extension headers walked from the raw bytes (RFC 8200)."""
    raw = bytes(ip6)
    end = 40 + int.from_bytes(raw[4:6], "big")
    nh, off = raw[6], 40
    while nh in IP6_EXT or nh == IP6_FRAG:
        if nh == IP6_FRAG:
            fo = int.from_bytes(raw[off + 2:off + 4], "big") >> 3
            nh = raw[off]
            off += 8
            if fo != 0:
                return nh, None
        else:
            nh, off = raw[off], off + (raw[off + 1] + 1) * 8
    return nh, raw[off:end]


def five_tuple(pkt):
    """(src, dst, proto, sport, dport, kind, family): kind is 'ports',
    'nonfirst', 'malformed' or 'none' (a protocol without ports)."""
    if IPv6 in pkt:
        ip6 = pkt[IPv6]
        src, dst = int(ipaddress.ip_address(ip6.src)), int(ipaddress.ip_address(ip6.dst))
        proto, l4 = ipv6_upper(ip6)
        t = _ports(src, dst, proto, l4)
        return t + (6,)
    ip = pkt[IP]
    src, dst, proto = int(ipaddress.ip_address(ip.src)), int(ipaddress.ip_address(ip.dst)), ip.proto
    if ip.frag != 0:
        return src, dst, proto, None, None, "nonfirst", 4
    l4 = bytes(ip.payload)[: max(0, ip.len - ip.ihl * 4)] if ip.len else bytes(ip.payload)
    return _ports(src, dst, proto, l4) + (4,)


def _ports(src, dst, proto, l4):
    if l4 is None:
        return src, dst, proto, None, None, "nonfirst"
    if proto not in PORT_PROTOS:
        return src, dst, proto, None, None, "none"
    if len(l4) < L4_MIN[proto]:
        return src, dst, proto, None, None, "malformed"
    if proto == 6 and not (5 <= (l4[12] >> 4) and (l4[12] >> 4) * 4 <= len(l4)):
        return src, dst, proto, None, None, "malformed"
    return src, dst, proto, int.from_bytes(l4[0:2], "big"), int.from_bytes(l4[2:4], "big"), "ports"


class Acl:
    """One acl stage. counters / hits mirror the stage's names."""

    RECLAIM = 256       # slots a full table checks before refusing a session

    def __init__(self, rules, default="deny", sessions=0, timeouts=None,
                 nonfirst="protocol-only", sweep=32):
        self.rules = rules
        self.default = default
        self.max_sessions = sessions or (65536 if any(r.action == "permit-reflect"
                                                      for r in rules) else 0)
        self.timeouts = dict(TIMEOUTS, **(timeouts or {}))
        self.proto_only = nonfirst == "protocol-only"
        self.sessions = {}
        self.counters = {}
        self.hits = {}
        self.sweep_n = sweep
        self.cursor = 0
        self.free = collections.deque(range(self.max_sessions))
        self.slot_key = {}

    def _new_session(self, key):
        pos = self.free.popleft()
        s = {"seen": [0, 0], "closing": False, "expires": 0, "pos": pos}
        self.sessions[key] = s
        self.slot_key[pos] = key
        return s

    def _del_session(self, key):
        s = self.sessions.pop(key)
        del self.slot_key[s["pos"]]
        self.free.append(s["pos"])
        self._count("session_expired")

    def sweep(self, count, now):
        """Check @count slots from the cursor (one more slot than sessions)."""
        while count > 0 and self.sessions:
            key = self.slot_key.get(self.cursor)
            self.cursor = (self.cursor + 1) % (self.max_sessions + 1)
            if key is not None and self.sessions[key]["expires"] <= now:
                self._del_session(key)
            count -= 1

    def _count(self, name, n=1):
        self.counters[name] = self.counters.get(name, 0) + n

    def match(self, t):
        src, dst, proto, sport, dport, kind, fam = t
        best = None
        for i, r in enumerate(self.rules):
            if r.family not in (None, fam):
                continue
            if r.src is not None and int(r.src.network_address) != src & int(r.src.netmask):
                continue
            if r.dst is not None and int(r.dst.network_address) != dst & int(r.dst.netmask):
                continue
            if r.proto is not None and r.proto != proto:
                continue
            if r.has_ports() and not (kind == "nonfirst" and self.proto_only):
                if kind != "ports" or not (r.sport[0] <= sport <= r.sport[1] and
                                           r.dport[0] <= dport <= r.dport[1]):
                    continue
            if best is None or r.priority > self.rules[best].priority:
                best = i
        return best

    @staticmethod
    def _key(t):
        src, dst, proto, sport, dport, _, fam = t
        a, b = (src, sport or 0), (dst, dport or 0)
        return ((fam, proto, a, b), 0) if a <= b else ((fam, proto, b, a), 1)

    def _touch(self, s, t, pkt, direction, now):
        proto = t[2]
        if proto == 6:
            flags = int(pkt[TCP].flags)
            s["seen"][direction] |= flags
            if flags & 0x05:            # FIN or RST
                s["closing"] = True
            est = (s["seen"][0] & s["seen"][1] & 0x12) == 0x12   # SYN and ACK both ways
            to = self.timeouts["tcp_established" if est and not s["closing"] else "tcp_transient"]
        elif proto == 17:
            to = self.timeouts["udp"]
        else:
            to = self.timeouts["other"]
        s["expires"] = now + to

    def packet(self, pkt, now=0.0):
        """Verdict for one packet: True (forwarded) or False (dropped)."""
        t = five_tuple(pkt)
        kind = t[5]
        if kind == "nonfirst":
            self._count("nonfirst_fragment")
        elif kind == "malformed":
            self._count("l4_malformed")
        sess_ok = kind in ("ports", "none")
        if self.max_sessions and sess_ok:
            key, direction = self._key(t)
            s = self.sessions.get(key)
            if s is not None and s["expires"] <= now:
                self._del_session(key)
                s = None
            if s is not None:
                self._touch(s, t, pkt, direction, now)
                self._count("session_permit")
                return True
        i = self.match(t)
        if i is None:
            action = self.default
            self._count("default_" + action)
        else:
            action = self.rules[i].action
            self.hits[i + 1] = self.hits.get(i + 1, 0) + 1
            self._count({"deny": "deny_rule"}.get(action, action.replace("-", "_")))
        if action == "deny":
            self._count("acl_deny")
            return False
        if action == "permit-reflect" and self.max_sessions and sess_ok:
            if len(self.sessions) >= self.max_sessions:
                self.sweep(self.RECLAIM, now)   # reclaim within the next 256 slots
            if len(self.sessions) >= self.max_sessions:
                self._count("session_full")
                return False
            key, direction = self._key(t)
            s = self._new_session(key)
            self._count("session_created")
            self._touch(s, t, pkt, direction, now)
        return True

    def expire_all(self, now):
        """What the idle sweep does at the end of a run."""
        for key in [k for k, s in self.sessions.items() if s["expires"] <= now]:
            self._del_session(key)

    def stage_counters(self, stage="acl"):
        out = {f"{stage}.{k}": v for k, v in self.counters.items()}
        out.update({f"{stage}.rule.{i}": v for i, v in self.hits.items()})
        return out


def from_topology(case_dir, stage="acl"):
    """An Acl configured like stage @stage of @case_dir/topology.yaml."""
    import yaml
    topo = yaml.safe_load(open(os.path.join(case_dir, "topology.yaml")))
    p = topo["stages"][stage]
    if "rules_file" in p:
        text = open(os.path.join(case_dir, p["rules_file"])).read()
    else:
        text = "\n".join(r if isinstance(r, str) else
                         " ".join([r["action"]] + [f"{k} {v}" for k, v in r.items()
                                                   if k != "action"])
                         for r in p.get("rules", []))
    return Acl(parse_rules(text), default=p.get("default", "deny"),
               sessions=p.get("sessions", 0), timeouts=p.get("session_timeouts"),
               nonfirst=p.get("nonfirst_fragments", "protocol-only"),
               sweep=p.get("session_sweep", 32))


def rx_burst(case_dir):
    """The burst of the case's (single) rx stage: how many packets share a sweep."""
    import yaml
    topo = yaml.safe_load(open(os.path.join(case_dir, "topology.yaml")))
    return next((st.get("burst", 32) for st in topo["stages"].values()
                 if st.get("type") == "rx"), 32)


def run(acl, pkts, burst=32):
    """Packets the stage forwards, in order; time from timed() packets. After
    each burst of @burst packets the stage sweeps (at the burst's newest time)."""
    def when(p):
        return float(p.time) if getattr(p, "_pf_timed", False) else 0.0
    out = []
    for b in range(0, len(pkts), burst):
        chunk = pkts[b:b + burst]
        out += [p for p in chunk if acl.packet(p, when(p))]
        if acl.max_sessions:
            acl.sweep(acl.sweep_n, max(when(p) for p in chunk))
    last = max([float(p.time) for p in pkts if getattr(p, "_pf_timed", False)] or [0.0])
    if acl.max_sessions:
        acl.expire_all(last)
    return out


def counters(acl, n_in, n_out, stage="acl"):
    """COUNTERS for a case: totals, every acl counter and rule hit, 0 for unused drops."""
    c = {"totals.rx": n_in, "totals.tx": n_out, f"{stage}.acl_deny": 0,
         f"{stage}.session_full": 0, f"{stage}.acl_not_ipv4": 0}
    c.update(acl.stage_counters(stage))
    return c


def single_stage_case(case_dir, inputs, src="p0", dst="p1", stage="acl"):
    """(expected, COUNTERS) for a replay case whose one acl stage @stage takes
    @inputs()[src] and forwards to @dst: the model configured from the case's
    topology.yaml decides both."""
    burst = rx_burst(case_dir)

    def expected(inp):
        return {dst: run(from_topology(case_dir, stage), inp[src], burst)}

    acl = from_topology(case_dir, stage)
    pkts = inputs()[src]
    out = run(acl, pkts, burst)
    return expected, counters(acl, len(pkts), len(out), stage)
