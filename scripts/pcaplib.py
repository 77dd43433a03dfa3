# SPDX-License-Identifier: BSD-3-Clause
"""Classic pcap files for pipefwd's Python tools and tests: the one writer
and the one reader (scripts/, test/; pipefwd-ctl replay installs it beside
replaycmp.py). Standard library only, so tools without scapy use it too.

  write_pcap(path, frames)       frames: bytes, any iterable; returns how many
  read_pcap(path)                [frame bytes]
  records(path)                  (time in seconds, frame bytes) ...

Files are written little-endian with microsecond timestamps (magic
a1b2c3d4), linktype Ethernet unless told; the reader takes either
endianness and microsecond or nanosecond files (net_pcap writes the latter).
"""
import os
import struct

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
BASE_SEC = 1700000000


def header(linktype=LINKTYPE_ETHERNET, snaplen=65535):
    """The 24-byte file header."""
    return struct.pack("<IHHiIII", MAGIC_US, 2, 4, 0, 0, snaplen, linktype)


def record(frame, sec=BASE_SEC, usec=0):
    """One record: its 16-byte header (whole frame captured) and the frame."""
    return struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame


def one_us_apart(i):
    """The default timestamps: BASE_SEC + i microseconds, so a file is the
    same bytes from run to run and its records are in time order."""
    return BASE_SEC + i // 1000000, i % 1000000


def write_pcap(path, frames, stamp=one_us_apart, linktype=LINKTYPE_ETHERNET, atomic=False):
    """Write @frames (bytes each) to @path; stamp(i) gives record i's
    (seconds, microseconds). With @atomic the file is written as PATH.tmp
    and renamed, so a reader never sees half of it. Returns the count."""
    out = path + ".tmp" if atomic else path
    n = 0
    with open(out, "wb") as f:
        f.write(header(linktype))
        for n, frame in enumerate(frames, 1):
            sec, usec = stamp(n - 1)
            f.write(record(bytes(frame), sec, usec))
    if atomic:
        os.replace(out, path)
    return n


def records(path, strict=False):
    """(time, frame) of each record of a classic pcap. A record cut short
    ends the file, or raises ValueError with @strict (a file still being
    written, or a broken one)."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            if strict:
                raise ValueError("%s: %d bytes, no pcap header" % (path, len(hdr)))
            return
        magic_le = struct.unpack("<I", hdr[:4])[0]
        if magic_le in (MAGIC_US, MAGIC_NS):
            endian, magic = "<", magic_le
        else:
            endian, magic = ">", struct.unpack(">I", hdr[:4])[0]
            if magic not in (MAGIC_US, MAGIC_NS):
                raise ValueError("%s: not a classic pcap (magic %08x)" % (path, magic_le))
        scale = 1e-9 if magic == MAGIC_NS else 1e-6
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                if rec and strict:
                    raise ValueError("%s: a record header cut short" % path)
                return
            sec, frac, incl, orig = struct.unpack(endian + "IIII", rec)
            if strict and incl > orig:
                raise ValueError("%s: a record of %d bytes for a frame of %d" % (path, incl, orig))
            data = f.read(incl)
            if len(data) < incl:
                if strict:
                    raise ValueError("%s: a record cut short (%d of %d bytes)" % (
                        path, len(data), incl))
                return
            yield sec + frac * scale, data


def read_pcap(path, strict=False):
    """The frames of a classic pcap, in order (records())."""
    return [data for _, data in records(path, strict)]
