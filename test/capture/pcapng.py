# SPDX-License-Identifier: BSD-3-Clause
"""A small pcapng reader for the capture tests (pcapng spec: SHB, IDB, EPB, ISB).

read(path) -> dict with
  shb:        {"comments": [...], "os": str, "app": str}
  interfaces: [{"name": str, "hardware": str, "linktype": int, "tsresol": int}]
  packets:    [{"if": int, "ts": int, "caplen": int, "len": int, "data": bytes,
                "flags": int or None, "queue": int or None, "comments": [...]}]
  stats:      [{"if": int, "comments": [...], "ifrecv": int, "ifdrop": int}]
Only little-endian sections (what DPDK writes on x86) are read.
"""
import struct

SHB, IDB, EPB, ISB = 0x0A0D0D0A, 1, 6, 5


def options(buf):
    """(code, value bytes) pairs of a block's options."""
    out, off = [], 0
    while off + 4 <= len(buf):
        code, length = struct.unpack_from("<HH", buf, off)
        off += 4
        if code == 0:
            break
        out.append((code, bytes(buf[off:off + length])))
        off += (length + 3) & ~3
    return out


def text(v):
    return v.decode("utf-8", "replace")


def read(path):
    data = open(path, "rb").read()
    res = {"shb": None, "interfaces": [], "packets": [], "stats": []}
    off = 0
    while off < len(data):
        if off + 12 > len(data):
            raise ValueError("%s: truncated block at %d" % (path, off))
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or blen % 4 or off + blen > len(data):
            raise ValueError("%s: bad block length %d at %d" % (path, blen, off))
        if struct.unpack_from("<I", data, off + blen - 4)[0] != blen:
            raise ValueError("%s: trailing length differs at %d" % (path, off))
        body = data[off + 8:off + blen - 4]
        if btype == SHB:
            magic, major, minor = struct.unpack_from("<IHH", body, 0)
            if magic != 0x1A2B3C4D or major != 1:
                raise ValueError("%s: not a little-endian pcapng 1.x section" % path)
            opts = options(body[16:])
            res["shb"] = {"comments": [text(v) for c, v in opts if c == 1],
                          "hardware": "".join(text(v) for c, v in opts if c == 2),
                          "os": "".join(text(v) for c, v in opts if c == 3),
                          "app": "".join(text(v) for c, v in opts if c == 4)}
        elif btype == IDB:
            linktype, _, snap = struct.unpack_from("<HHI", body, 0)
            opts = options(body[8:])
            res["interfaces"].append({
                "linktype": linktype,
                "name": "".join(text(v) for c, v in opts if c == 2),
                "hardware": "".join(text(v) for c, v in opts if c == 15),
                "tsresol": next((v[0] for c, v in opts if c == 9), 6)})
        elif btype == EPB:
            ifid, tsh, tsl, caplen, olen = struct.unpack_from("<IIIII", body, 0)
            pkt = bytes(body[20:20 + caplen])
            opts = options(body[20 + ((caplen + 3) & ~3):])
            res["packets"].append({
                "if": ifid, "ts": (tsh << 32) | tsl, "caplen": caplen, "len": olen,
                "data": pkt,
                "flags": next((struct.unpack("<I", v)[0] for c, v in opts if c == 2), None),
                "queue": next((struct.unpack("<Q", v.ljust(8, b"\0"))[0]
                               for c, v in opts if c == 6), None),
                "comments": [text(v) for c, v in opts if c == 1]})
        elif btype == ISB:
            ifid = struct.unpack_from("<I", body, 0)[0]
            opts = options(body[12:])
            res["stats"].append({
                "if": ifid, "comments": [text(v) for c, v in opts if c == 1],
                "ifrecv": next((struct.unpack("<Q", v)[0] for c, v in opts if c == 4), None),
                "ifdrop": next((struct.unpack("<Q", v)[0] for c, v in opts if c == 5), None)})
        off += blen
    return res
