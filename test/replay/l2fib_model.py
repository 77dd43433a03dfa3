# SPDX-License-Identifier: BSD-3-Clause
"""An independent model of the l2fib stage for its replay cases.

A serial learning bridge, written from docs/stages/l2fib.md, not from the C
code: bridge domains (VLAN, ports), learning with station moves, static
entries, aging in whole seconds, a table-size cap, flooding to every other
port of the domain, IEEE link-local destinations never forwarded.

Processing order: pipefwd's rx reads each input pcap whole in one burst
(cases stay under the rx burst), p0 first, then p1, and so on; the bridge
sees the packets in that order. Cases give later ports the packets that
depend on what earlier ports taught the bridge.
"""
import struct

from replaylib import raw_bytes


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


class Bridge:
    def __init__(self, domains, table_size=65536, age_s=300, static=(), port_learn_limit=0,
                 timed=False):
        """domains: [(name, vlan or 0, [port names])]; static: [(mac, port, domain)]."""
        self.domains = domains
        self.cap = table_size
        self.age = age_s
        self.limit = port_learn_limit
        self.timed = timed          # runtime clock pcap: packet times drive aging
        self.fib = {}               # (mac bytes, domain index) -> [port, seen, static]
        self.c = {k: 0 for k in ("learned", "mac_move", "aged", "hit", "miss", "flooded",
                                 "fib_full", "port_learn_limit", "static_src_mismatch",
                                 "l2_no_domain", "l2_reserved_dst", "l2_same_port",
                                 "l2_flood_empty")}
        self.flood_copies = 0
        self.now = 0
        for mac, port, dom in static:
            bd = [d[0] for d in domains].index(dom)
            self.fib[(mac_bytes(mac), bd)] = [port, 0, True]

    def domain(self, port, vid):
        for i, (_, vlan, ports) in enumerate(self.domains):
            if vlan == vid and port in ports:
                return i
        return None

    def expired(self, e, t):
        return self.timed and self.age and not e[2] and t - e[1] >= self.age

    def learned_on(self, port):
        return sum(1 for e in self.fib.values() if not e[2] and e[0] == port)

    def learn(self, key, port, t):
        e = self.fib.get(key)
        if e is not None and self.expired(e, t):
            self.c["aged"] += 1
            del self.fib[key]
            e = None
        if e is not None:
            if e[2]:
                if e[0] != port:
                    self.c["static_src_mismatch"] += 1
            elif e[0] != port:
                if self.limit and self.learned_on(port) >= self.limit:
                    self.c["port_learn_limit"] += 1
                    del self.fib[key]
                else:
                    self.c["mac_move"] += 1
                    e[0], e[1] = port, t
            else:
                e[1] = max(e[1], t)
            return
        if len(self.fib) >= self.cap:
            self.c["fib_full"] += 1
        elif self.limit and self.learned_on(port) >= self.limit:
            self.c["port_learn_limit"] += 1
        else:
            self.fib[key] = [port, t, False]
            self.c["learned"] += 1

    def packet(self, port, pkt):
        """Ports this frame leaves on ([] when dropped)."""
        data = raw_bytes(pkt)
        t = int(float(pkt.time)) if self.timed else 0
        self.now = max(self.now, t)
        dst, src = data[0:6], data[6:12]
        vid = 0
        if struct.unpack("!H", data[12:14])[0] == 0x8100:
            vid = struct.unpack("!H", data[14:16])[0] & 0xFFF
        bd = self.domain(port, vid)
        if bd is None:
            self.c["l2_no_domain"] += 1
            return []
        if dst[:5] == b"\x01\x80\xc2\x00\x00" and dst[5] < 0x10:
            self.c["l2_reserved_dst"] += 1
            return []
        self.learn((src, bd), port, t)
        if not dst[0] & 1:
            e = self.fib.get((dst, bd))
            if e is not None and not self.expired(e, t):
                if e[0] == port:
                    self.c["l2_same_port"] += 1
                    return []
                self.c["hit"] += 1
                return [e[0]]
            self.c["miss"] += 1
        outs = [p for p in self.domains[bd][2] if p != port]
        if not outs:
            self.c["l2_flood_empty"] += 1
            return []
        self.c["flooded"] += 1
        self.flood_copies += len(outs) - 1
        return outs

    def finish(self):
        """After the run the sweep has removed every entry expired at the last time seen."""
        for key in [k for k, e in self.fib.items() if self.expired(e, self.now)]:
            self.c["aged"] += 1
            del self.fib[key]


def run(bridge, inputs, ports):
    """Feed @inputs port by port in @ports order; return {port: [frames out]}."""
    out = {p: [] for p in ports}
    for p in ports:
        for pkt in inputs.get(p, []):
            for o in bridge.packet(p, pkt):
                out[o].append(pkt)
    bridge.finish()
    return out


def counters(bridge, inputs, stage="l2", tx="tx", extra=None):
    """COUNTERS for a case: every l2fib counter, flood copies and the totals."""
    c = {f"{stage}.{k}": v for k, v in bridge.c.items()}
    rx = sum(len(v) for v in inputs.values())
    dropped = sum(bridge.c[k] for k in ("l2_no_domain", "l2_reserved_dst", "l2_same_port",
                                        "l2_flood_empty"))
    c[f"{tx}.flood_copies"] = bridge.flood_copies
    c["totals.rx"] = rx
    c["totals.replicas"] = bridge.flood_copies
    c["totals.tx"] = rx - dropped + bridge.flood_copies
    c["totals.unaccounted"] = 0
    c.update(extra or {})
    return c
