#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Latency you can see (issue 31 item 3): ring sojourn and rx -> tx latency.

rx (p0, a replay looped forever) on lcore 1 hands every packet over a ring to
a `delay` stage (pipefwd-test) on lcore 2 that busy-waits D microseconds per
burst, then xconnect and tx to p1 on the same lcore. Lossless mode, so the
ring stays full instead of dropping. Properties, none of them a timing
bound a busy machine can break (every one is a lower bound the delay
itself imposes, or a relation between fields):

- off by default: no sample in any histogram; `pipefwd-ctl latency on`
  turns it on, samples come, `latency off` stops them (counts stay);
- the ring rx->delay: every sampled packet waited at least one delay in the
  ring (it sits behind a burst that the consumer holds D us), so its p50
  sojourn is at least D; the direct edges after it have no sample;
- the port p1: every packet took at least one delay from rx to tx, so its
  rx -> tx p50 is at least D; p50 <= p99 <= max and mean <= max everywhere;
- a stalled consumer shows: with D raised by a reload (and the histograms
  cleared), the ring's p50 is at least the new D, as the old one was at
  least the old D (a p99 that must rise by the difference did not hold on a
  loaded machine: the first window's p99 was a 56 ms preemption);
- the fields in `pipefwd-ctl rings` / `ports` / `top`, Prometheus and the -j
  report agree with /pipefwd/rings and /pipefwd/ports.

usage: test_latency.py PIPEFWD_TEST PIPEFWD_CTL
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))
from pftest import (Ctl, dpdk_rundir, finish, numbered_udp, stop_pipefwd,  # noqa: E402
                    telemetry, write_atomic, write_pcap)

PIPEFWD_TEST, CTL = os.path.abspath(sys.argv[1]), sys.argv[2]
TAG = "lat_t%d" % os.getpid()
FAILS = []
D1, D2 = 500, 3000           # microseconds per burst in the delay stage

TOPO = """\
eal: [--no-huge, -m, "512", --no-pci]
ports:
  p0: {{ device: "net_pcap0,rx_pcap={pcap},infinite_rx=1" }}
  p1: {{ device: "net_null0" }}
stages:
  rx: {{ type: rx, ports: [p0], next: {{ ipv4: slow }} }}
  slow: {{ type: delay, us: {us}, next: xc }}
  xc: {{ type: xconnect, pairs: {{ p0: p1 }}, next: tx }}
  tx: {{ type: tx, ports: [p1] }}
rings:
  default: {{ size: 256, burst: 32 }}
runtime: {{ backpressure: true{latency} }}
lcores:
  1: [rx]
  2: [slow, xc, tx]
"""


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def wait_for(what, fn, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    check(False, "timed out waiting for " + what)
    return None


class Run:
    def __init__(self, tmp, name, us, latency=False):
        self.prefix = "%s_%s" % (TAG, name)
        self.topo = os.path.join(tmp, name + ".yaml")
        self.json = os.path.join(tmp, name + ".json")
        self.text = lambda us: TOPO.format(pcap=os.path.join(tmp, "in.pcap"), us=us,
                                           latency=", latency: true" if latency else "")
        with open(self.topo, "w") as f:
            f.write(self.text(us))
        self.log = open(os.path.join(tmp, name + ".log"), "w")
        self.proc = subprocess.Popen([PIPEFWD_TEST, "-q", "-j", self.json, self.topo, "--",
                                      "--file-prefix=" + self.prefix],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.rundir = dpdk_rundir(self.prefix)
        self.sock = os.path.join(self.rundir, "dpdk_telemetry.v2")
        self.ctl = Ctl(CTL, self.prefix, check)

    def tel(self, cmd):
        try:
            return telemetry(self.sock, cmd, timeout=20)
        except (OSError, ValueError, KeyError):
            return None

    def ready(self):
        return wait_for("pipefwd to forward", lambda: (self.tel("/pipefwd/totals") or {})
                        .get("tx", 0) > 0)

    def ring(self):
        return (self.tel("/pipefwd/rings,rx->slow") or {}).get("rx_to_slow", {})

    def port(self):
        return (self.tel("/pipefwd/ports,p1") or {}).get("p1", {})

    def stop(self):
        return stop_pipefwd(self.proc, self.log, self.rundir)


def consistent(what, h):
    """The relations every summary keeps."""
    if not h or not h.get("samples"):
        return
    check(h["p50_ns"] <= h["p99_ns"] <= h["max_ns"], "%s: p50 <= p99 <= max: %s" % (what, h))
    check(h["mean_ns"] <= h["max_ns"], "%s: mean <= max: %s" % (what, h))


def main():
    tmp = tempfile.mkdtemp(prefix="pf-latency-")
    write_pcap(os.path.join(tmp, "in.pcap"), [numbered_udp(i) for i in range(256)])

    # 1. Off by default; one command turns it on and off.
    r = Run(tmp, "onoff", D1)
    try:
        if r.ready():
            time.sleep(1.0)
            check(r.ring().get("sojourn", {}).get("samples") == 0,
                  "off by default, yet ring samples: %s" % r.ring())
            check(r.port().get("latency", {}).get("samples") == 0,
                  "off by default, yet port samples: %s" % r.port())
            out = r.ctl("latency").stdout.strip()
            check(out == "latency off", "pipefwd-ctl latency: %r" % out)
            out = r.ctl("latency", "on").stdout.strip()
            check(out == "latency on", "pipefwd-ctl latency on: %r" % out)
            ring = wait_for("ring samples after latency on",
                            lambda: r.ring().get("sojourn", {}).get("samples", 0) >= 5 and
                            r.ring())
            port = wait_for("port samples after latency on",
                            lambda: r.port().get("latency", {}).get("samples", 0) >= 5 and
                            r.port())
            if ring and port:
                s, lat = ring["sojourn"], port["latency"]
                print("on: sojourn %s, rx->tx %s" % (s, lat))
                check(s["p50_ns"] >= D1 * 1000,
                      "ring p50 %d ns under one delay (%d us)" % (s["p50_ns"], D1))
                check(lat["p50_ns"] >= D1 * 1000,
                      "rx->tx p50 %d ns under one delay (%d us)" % (lat["p50_ns"], D1))
                consistent("ring", s)
                consistent("port", lat)
                direct = (r.tel("/pipefwd/rings,slow->xc") or {}).get("slow_to_xc", {})
                check(direct.get("sojourn", {}).get("samples") == 0 and direct.get("direct"),
                      "a direct edge has no sojourn sample: %s" % direct)
            r.ctl("latency", "off")
            a = (r.ring().get("sojourn", {}).get("samples"),
                 r.port().get("latency", {}).get("samples"))
            time.sleep(1.5)
            b = (r.ring().get("sojourn", {}).get("samples"),
                 r.port().get("latency", {}).get("samples"))
            check(a == b and a[0], "latency off: samples still moving %s -> %s" % (a, b))
            bad = r.ctl("latency", "maybe", ok=False)
            check(bad.returncode != 0, "latency maybe accepted")
    finally:
        check(r.stop() == 0, "onoff: pipefwd exit status")

    # 2. On from the topology; a longer delay shows in the ring's p99.
    r = Run(tmp, "stall", D1, latency=True)
    try:
        if r.ready():
            first = wait_for("samples with runtime.latency",
                             lambda: r.ring().get("sojourn", {}).get("samples", 0) >= 10 and
                             r.ring())
            write_atomic(r.topo, r.text(D2))
            r.ctl("reload")
            time.sleep(1.0)
            r.ctl("clear")
            second = wait_for("samples after the stall",
                              lambda: r.ring().get("sojourn", {}).get("samples", 0) >= 10 and
                              r.ring())
            if first and second:
                p1, p2 = first["sojourn"]["p50_ns"], second["sojourn"]["p50_ns"]
                print("p50 sojourn %d us at %d us a burst, %d us at %d us" % (
                    p1 / 1000, D1, p2 / 1000, D2))
                check(p1 >= D1 * 1000 and p2 >= D2 * 1000,
                      "a stalled consumer: ring p50 %d ns at %d us a burst, %d ns at %d us: "
                      "each under one delay" % (p1, D1, p2, D2))
                consistent("ring after stall", second["sojourn"])
            # The clients show what the socket says.
            out = r.ctl("rings").stdout
            check("sojourn us p50/p99/max" in out and "rx->slow" in out, "rings table: " + out)
            out = r.ctl("ports").stdout
            check("rx->tx us p50/p99/max" in out, "ports table: " + out)
            # top's port table once the port has a sample since the clear
            wait_for("a port sample since the clear",
                     lambda: r.port().get("latency", {}).get("samples", 0) >= 1)
            out = r.ctl("top", "--iterations", "1", "--interval", "0.5").stdout
            check("sojourn us p50/p99" in out and re.search(r"^p1\s+\d+\s+[\d.]+", out, re.M) and
                  "PORT rx->tx" in out, "top: " + out)
            prom = r.ctl("prom").stdout
            for name in ('pipefwd_ring_sojourn_seconds{ring="rx->slow",quantile="0.99"}',
                         'pipefwd_port_latency_seconds{port="p1",quantile="0.5"}',
                         'pipefwd_ring_sojourn_seconds_count{ring="rx->slow"}'):
                check(name in prom, "prom lacks %s" % name)
    finally:
        check(r.stop() == 0, "stall: pipefwd exit status")
    try:
        with open(r.json) as f:
            rep = json.load(f)
        s = rep["rings"]["rx->slow"]["sojourn"]
        lat = rep["ports"]["p1"]["latency"]
        check(s["samples"] > 0 and lat["samples"] > 0, "-j report: %s %s" % (s, lat))
        check(lat["p50_ns"] >= D1 * 1000, "-j rx->tx p50 %s" % lat)
        consistent("-j ring", s)
        consistent("-j port", lat)
        check(rep["rings"]["xc->tx"]["sojourn"]["samples"] == 0, "-j: a direct edge sampled")
    except (OSError, ValueError, KeyError) as e:
        check(False, "-j report: %s" % e)
    finish(FAILS, tmp)


if __name__ == "__main__":
    main()
