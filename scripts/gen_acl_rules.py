#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate acl rule files (and matching traffic) for benchmarks and tests.

    /usr/bin/python3 scripts/gen_acl_rules.py -n 1000 --variant last -o acl_1000_last.rules \
        [--pcap traffic.pcap --flows 64]

Variants (after the VPP ACL plugin's benchmark table):
  last      rules 1..N-1 never match the traffic, rule N permits it all
            ("matching rule last": the worst case for a linear matcher);
  all       every rule matches the traffic (overlapping, first one wins);
  distinct  rule i matches only source 10.(i>>8).(i&255).0/24 (i = 1..N),
            odd rules permit, even rules deny; for "match on the n-th rule".
Traffic (--pcap): UDP from 172.16.x.y (last, all) or from the distinct
rules' prefixes, to 192.168.0.0/16, --flows flows, 64-byte frames.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def rules_last(n):
    out = []
    for i in range(1, n):
        # Same shape as the matching rule but another source network.
        out.append(f"deny src 10.{(i >> 8) & 255}.{i & 255}.0/24 dst 192.168.0.0/16 "
                   f"proto udp sport 1024-65535 dport 1-1023")
    out.append("permit src 172.16.0.0/12 dst 192.168.0.0/16 proto udp")
    return out


def rules_all(n):
    out = []
    for i in range(1, n + 1):
        # Every rule covers the whole traffic; they differ in port ranges only.
        out.append(f"permit src 172.16.0.0/12 dst 192.168.0.0/16 proto udp "
                   f"sport {i % 1024}-65535 dport 0-{65535 - i % 1024}")
    return out


def rules_distinct(n):
    return [f"{'permit' if i % 2 else 'deny'} src 10.{(i >> 8) & 255}.{i & 255}.0/24 proto udp"
            for i in range(1, n + 1)]


VARIANTS = {"last": rules_last, "all": rules_all, "distinct": rules_distinct}


def traffic(variant, flows, n_rules):
    from replaylib import udp4
    pkts = []
    for f in range(flows):
        if variant == "distinct":
            i = 1 + f % n_rules
            src = f"10.{(i >> 8) & 255}.{i & 255}.{1 + f % 200}"
        else:
            src = f"172.16.{(f >> 8) & 255}.{f & 255}"
        pkts.append(udp4(src=src, dst=f"192.168.{f & 255}.1", sport=2000 + f, dport=53,
                         payload=b"\0" * 18))
    return pkts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--rules", type=int, required=True, help="number of rules")
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="last")
    ap.add_argument("--reflect", action="store_true",
                    help="permit-reflect instead of permit (stateful benchmarks)")
    ap.add_argument("-o", "--out", default="-", help="rule file (default stdout)")
    ap.add_argument("--pcap", help="also write matching traffic to this pcap")
    ap.add_argument("--flows", type=int, default=64)
    a = ap.parse_args()
    if a.rules < 1:
        ap.error("need at least one rule")
    rules = VARIANTS[a.variant](a.rules)
    if a.reflect:
        rules = [r.replace("permit ", "permit-reflect ", 1) if r.startswith("permit ") else r
                 for r in rules]
    text = (f"# {a.rules} rules, variant {a.variant}{' (reflect)' if a.reflect else ''}: "
            f"scripts/gen_acl_rules.py\n" + "\n".join(rules) + "\n")
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)
    if a.pcap:
        from replaylib import write_pcap
        write_pcap(a.pcap, traffic(a.variant, a.flows, a.rules))


if __name__ == "__main__":
    main()
