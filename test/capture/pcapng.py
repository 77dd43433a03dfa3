# SPDX-License-Identifier: BSD-3-Clause
"""A small pcapng reader for the capture tests (pcapng spec: SHB, IDB, EPB, ISB).

read(path) -> dict with
  shb:        {"comments": [...], "os": str, "app": str}
  interfaces: [{"name": str, "hardware": str, "linktype": int, "tsresol": int}]
  packets:    [{"if": int, "ts": int, "caplen": int, "len": int, "data": bytes,
                "flags": int or None, "queue": int or None, "comments": [...]}]
  stats:      [{"if": int, "comments": [...], "ifrecv": int, "ifdrop": int}]
  count:      the number of packet blocks
Only little-endian sections (what DPDK writes on x86) are read.
"""
import struct

SHB, IDB, EPB, ISB = 0x0A0D0D0A, 1, 6, 5


_HDR = struct.Struct("<HH")
_EPB = struct.Struct("<IIIII")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def options(buf):
    """(code, value bytes) pairs of a block's options."""
    out, off, end = [], 0, len(buf)
    while off + 4 <= end:
        code, length = _HDR.unpack_from(buf, off)
        off += 4
        if code == 0:
            break
        out.append((code, bytes(buf[off:off + length])))
        off += (length + 3) & ~3
    return out


def text(v):
    return v.decode("utf-8", "replace")


def read(path, packets=True):
    """packets=False: count the packet blocks (res["count"]) without decoding them."""
    with open(path, "rb") as fh:
        data = memoryview(fh.read())
    res = {"shb": None, "interfaces": [], "packets": [], "stats": [], "count": 0}
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
        elif btype == EPB and not packets:
            res["count"] += 1
        elif btype == EPB:
            res["count"] += 1
            # (the hot loop: a long capture holds millions of these)
            ifid, tsh, tsl, caplen, olen = _EPB.unpack_from(body, 0)
            flags = queue = None
            comments = []
            for c, v in options(body[20 + ((caplen + 3) & ~3):]):
                if c == 2 and flags is None:
                    flags = _U32.unpack(v)[0]
                elif c == 6 and queue is None:
                    queue = _U64.unpack(v.ljust(8, b"\0"))[0]
                elif c == 1:
                    comments.append(text(v))
            res["packets"].append({
                "if": ifid, "ts": (tsh << 32) | tsl, "caplen": caplen, "len": olen,
                "data": bytes(body[20:20 + caplen]), "flags": flags, "queue": queue,
                "comments": comments})
        elif btype == ISB:
            ifid = struct.unpack_from("<I", body, 0)[0]
            opts = options(body[12:])
            res["stats"].append({
                "if": ifid, "comments": [text(v) for c, v in opts if c == 1],
                "ifrecv": next((struct.unpack("<Q", v)[0] for c, v in opts if c == 4), None),
                "ifdrop": next((struct.unpack("<Q", v)[0] for c, v in opts if c == 5), None)})
        off += blen
    return res
