"""IPv4 fragmentation (RFC 791) by the ip4frag stage, modelled independently.

Route 10/8 -> r1 on p1 (mtu 576); hosts on p0 (mtu 2000). A datagram longer
than 576 with DF clear is routed (TTL - 1, MACs rewritten, a VID 0 tag
dropped) and cut into fragments: each carries at most
floor((576 - IHL*4) / 8) * 8 payload bytes, MF on all but the last (an input
that is itself a non-last fragment keeps MF on all), offsets added to the
input's own, the first fragment with every option, the others with only the
options whose copied flag is set (padded with EOL to 4 bytes), a full header
checksum on each. The model below is RFC 791's algorithm; for datagrams
without options it is checked against scapy's fragment() as well. DF set:
ICMP 3/4 with MTU 576 back out of p0."""
import struct

from replaylib import Ether, Dot1Q, IP, UDP, TCP, Raw, raw_bytes, icmp_error
from scapy.all import IPOption_RR, IPOption_Router_Alert, fragment
from scapy.utils import checksum

R0, R1, NH1 = "02:00:00:00:00:10", "02:00:00:00:00:11", "02:00:00:00:01:01"
HOST, SRC, R0_IP = "02:00:00:00:00:aa", "192.168.0.9", "192.168.0.1"
MTU1 = 576


def dgram(total, dst="10.1.2.3", flags=0, frag=0, ident=1, tagged=False, options=None,
          l4="udp"):
    """Ethernet/IPv4 frame from HOST whose IPv4 total length is @total."""
    l2 = Ether(src=HOST, dst=R0)
    if tagged:
        l2 = l2 / Dot1Q(vlan=0, prio=3)
    ipk = dict(src=SRC, dst=dst, ttl=64, flags=flags, frag=frag, id=ident)
    if options:
        ipk["options"] = options
    ihl = len(IP(**ipk).build())
    if l4 == "udp":
        body = UDP(sport=4000, dport=9999) / Raw(bytes(range(256)) * 8)
    elif l4 == "tcp":
        body = TCP(sport=4001, dport=80, flags="A") / Raw(b"t" * 2048)
    else:                               # a fragment's payload: raw bytes
        ipk["proto"] = 17
        body = Raw(bytes((i * 7) & 0xff for i in range(2048)))
    pkt = l2 / IP(**ipk) / body
    b = raw_bytes(pkt)
    l2len = 18 if tagged else 14
    frame = b[:l2len + total]
    # fix the lengths for the cut: IPv4 total length and checksum; UDP/TCP
    # checksums are whatever they are (the router never looks at them)
    p = Ether(frame)
    p[IP].len = total
    del p[IP].chksum
    if UDP in p and p[IP].frag == 0 and not (p[IP].flags & 1):
        p[UDP].len = total - ihl
    return Ether(bytes(p))


def routed_ip(pkt):
    """The IPv4 datagram lpm forwards: TTL - 1, header checksum recomputed."""
    ip = IP(raw_bytes(pkt[IP]))
    ip.ttl -= 1
    del ip.chksum
    return IP(bytes(ip))


def copied_options(opts):
    """RFC 791: the options a non-first fragment carries, EOL-padded to 4."""
    out, i = b"", 0
    while i < len(opts):
        t = opts[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        ln = opts[i + 1]
        if t & 0x80:
            out += opts[i:i + ln]
        i += ln
    return out + b"\x00" * (-len(out) % 4)


def rfc791_fragments(ip_bytes, mtu):
    """RFC 791 fragmentation of one datagram (bytes) for @mtu: list of bytes."""
    ihl = (ip_bytes[0] & 0xf) * 4
    hdr, data = ip_bytes[:ihl], ip_bytes[ihl:]
    flags_off = struct.unpack("!H", hdr[6:8])[0]
    mf_in, off_in = flags_off & 0x2000, flags_off & 0x1fff
    size = (mtu - ihl) // 8 * 8
    frags, pos, h = [], 0, hdr
    while pos < len(data):
        chunk = data[pos:pos + size]
        last = pos + size >= len(data)
        hl = len(h)
        fo = (off_in + pos // 8) | (mf_in if last else 0x2000)
        f = bytearray(h)
        f[0] = 0x40 | hl // 4
        f[2:4] = struct.pack("!H", hl + len(chunk))
        f[6:8] = struct.pack("!H", fo)
        f[10:12] = b"\x00\x00"
        f[10:12] = struct.pack("!H", checksum(bytes(f)))
        frags.append(bytes(f) + chunk)
        if pos == 0:    # the later fragments carry the copied options only
            h = hdr[:20] + copied_options(hdr[20:])
        pos += size
    return frags


def frame(ip_bytes):
    return Ether(src=R1, dst=NH1, type=0x0800) / Raw(ip_bytes)


def fragmented(pkt):
    ip = raw_bytes(routed_ip(pkt))
    frags = rfc791_fragments(ip, MTU1)
    if len(IP(ip).options) == 0:
        # cross-check with scapy's own fragment() (it copies every option, so
        # only without options)
        ihl = (ip[0] & 0xf) * 4
        ref = [raw_bytes(IP(raw_bytes(f))) for f in fragment(IP(ip), (MTU1 - ihl) // 8 * 8)]
        assert ref == frags, "RFC 791 model and scapy fragment() disagree"
    return [frame(f) for f in frags]


def forward(pkt):
    return frame(raw_bytes(routed_ip(pkt)))


RR = IPOption_RR(routers=["10.9.9.1", "10.9.9.2"])       # copied flag 0
RA = IPOption_Router_Alert()                            # copied flag 1

FRAG = [
    dgram(1900),                                       # 4 fragments
    dgram(1000, l4="tcp", ident=7),                    # 2
    dgram(MTU1 + 1, ident=8),                          # 2, the last one 8 bytes
    dgram(1500, flags="MF", frag=0, ident=9, l4="raw"),      # first fragment: all MF
    dgram(820, flags="MF", frag=185, ident=9, l4="raw"),     # middle fragment
    dgram(620, flags=0, frag=285, ident=9, l4="raw"),        # last fragment
    dgram(1200, ident=10, options=[RR, RA]),           # options: RA copied, RR not
    dgram(1500, ident=11, tagged=True),                # VID 0 tag in, untagged out
    dgram(2000, ident=16, tagged=True),                # p0's whole MTU, tagged (frame 2018)
]
# Another flow: a burst's packets on lpm's out edge leave before the ones it
# sent to the fragment edge (the runtime moves a burst edge by edge).
FITS = [dgram(MTU1, dst="10.1.2.4", ident=12), dgram(MTU1, dst="10.1.2.4", ident=13, flags="DF")]
DF = [dgram(1000, flags="DF", ident=14), dgram(MTU1 + 1, flags="DF", ident=15)]


def inputs():
    return {"p0": FRAG + FITS + DF}


def expected(inp):
    p1 = []
    for p in FRAG:
        p1 += fragmented(p)
    p1 += [forward(p) for p in FITS]
    return {"p0": [icmp_error(p, (3, 4, MTU1), i, R0, R0_IP) for i, p in enumerate(DF)],
            "p1": p1}


_nfrag = sum(len(fragmented(p)) for p in FRAG)
COUNTERS = {
    "lpm.ip4_to_fragment": len(FRAG),
    "lpm.ip4_frag_needed_unsupported": 0,
    "lpm.ip4_mtu_exceeded_df_to_icmp": len(DF),
    "icmp.frag_needed": len(DF),
    "frag.fragmented": len(FRAG),
    "frag.fragments": _nfrag,
    "frag.unfragmented": 0,
    "frag.frag_nombuf": 0,
    "frag.frag_too_many": 0,
    "totals.rx": len(FRAG) + len(FITS) + len(DF),
    "totals.replicas": _nfrag - len(FRAG),
    "totals.tx": _nfrag + len(FITS) + len(DF),
    "totals.dropped": 0,
    "ports.p0.tx": len(DF),
    "ports.p1.tx": _nfrag + len(FITS),
}
