# SPDX-License-Identifier: BSD-3-Clause
"""pipefwd-ctl top on a terminal: the curses front end.

It only draws and takes keys. What a frame holds comes from the caller's
source (pipefwd-ctl's TopSource): sample() reads pipefwd, frame(cur, prev)
gives the head lines, the sections ({"header", "rows", "align", "keys"})
and a warning, table(section) lays a section out, clear() clears pipefwd's
counters, columns explains them. A new section is added there, not here.

Nothing is dropped silently: a line wider than the terminal ends in '>'
(and starts with '<' when scrolled right), lines below the window are
counted on the status bar, and the arrow keys scroll to them.
"""
import curses
import time

SORTS = ("order", "rate", "cost", "drops")
KEYS = """\
Keys (any key closes this help)
  h ?         this help
  p space     pause / resume: the frame stays; rates restart on resume
  s           sort rings, stages, lcores, ports: order, rate, cost, drops (rate:
              packets or busy %; cost: cycles/packet, fill or bytes; drops: per s)
  c           clear pipefwd's counters (as pipefwd-ctl clear)
  arrow keys  scroll a frame larger than the terminal (PgUp PgDn Home too)
  q           quit (Ctrl-C too)
A line cut at the right edge ends in '>', one scrolled right starts with
'<'; the status bar counts the lines below or above the window.
"""


class View:
    """The state of the screen: sort, pause, help, scroll, a message."""

    def __init__(self, scr, src):
        self.scr, self.src = scr, src
        self.sort = 0
        self.paused = self.help = False
        self.top = self.left = 0
        self.msg, self.msg_until = "", 0.0
        self.frame = None       # (cur, prev) of the frame shown

    def say(self, msg, secs=4.0):
        self.msg, self.msg_until = msg, time.monotonic() + secs

    def lines(self):
        """[(text, bold)] of the whole frame, before it is fitted to the window."""
        if self.help:
            return [(l, False) for l in (KEYS + "\n" + self.src.columns).split("\n")]
        if self.frame is None:
            return [("waiting for the first sample ...", False)]
        head, sections, warn = self.src.frame(*self.frame)
        state = "  sort: %s" % SORTS[self.sort] + ("  PAUSED" if self.paused else "")
        out = [(head[0] + state, True)] + [(l, False) for l in head[1:]]
        for sec in sections:
            out.append(("", False))
            sec = self.sorted(sec)
            for i, l in enumerate(self.src.table(sec)):
                out.append((l, i == 0))
        if warn:
            out += [("", False), (warn, False)]
        return out

    def sorted(self, sec):
        """@sec with its rows in the chosen order (rows without keys keep theirs)."""
        how = SORTS[self.sort]
        keys = sec.get("keys")
        if how == "order" or not keys or not any(how in k for k in keys):
            return sec
        order = sorted(range(len(sec["rows"])), key=lambda i: -keys[i].get(how, 0))
        return dict(sec, rows=[sec["rows"][i] for i in order], keys=[keys[i] for i in order])

    def put(self, y, text, attr, w):
        seg = text[self.left:]
        if self.left > 0 and text.strip():
            seg = "<" + seg[1:]
        if len(seg) > w:
            seg = seg[:w - 1] + ">"
        try:
            self.scr.addnstr(y, 0, seg, w, attr)
        except curses.error:
            pass        # the bottom-right cell: curses refuses the cursor move after it

    def draw(self):
        h, w = self.scr.getmaxyx()
        self.scr.erase()
        if h < 3 or w < 20:
            self.put(0, "terminal too small", 0, w)
            self.scr.refresh()
            return
        lines = self.lines()
        body = h - 1
        self.top = max(0, min(self.top, len(lines) - body))
        widest = max((len(t) for t, _ in lines), default=0)
        self.left = max(0, min(self.left, widest - w + 1))
        for y, (text, bold) in enumerate(lines[self.top:self.top + body]):
            self.put(y, text, curses.A_BOLD if bold else 0, w)
        below = len(lines) - self.top - body
        bar = []
        if self.top > 0:
            bar.append("^ %d above" % self.top)
        if below > 0:
            bar.append("v %d more lines" % below)
        if widest > w:
            bar.append("<> %d columns wider" % (widest - w + 1))
        if time.monotonic() < self.msg_until:
            bar.append(self.msg)
        else:
            bar.append("h help  p pause  s sort  c clear  q quit")
        self.put(h - 1, ("  ".join(bar)).ljust(w - 1), curses.A_REVERSE, w - 1)
        self.scr.refresh()

    def key(self, ch):
        """Act on key @ch. Returns "quit", "resample" (take a fresh base
        sample: after a resume or a clear) or None."""
        if self.help:
            self.help = False
            return None
        h, _ = self.scr.getmaxyx()
        if ch in (ord("q"), ord("Q")):
            return "quit"
        if ch in (ord("h"), ord("?"), curses.KEY_F1):
            self.help, self.top, self.left = True, 0, 0
        elif ch in (ord("p"), ord(" ")):
            self.paused = not self.paused
            self.say("paused: press p to resume" if self.paused else "resumed")
            return None if self.paused else "resample"
        elif ch == ord("s"):
            self.sort = (self.sort + 1) % len(SORTS)
            self.say("sorted by %s" % SORTS[self.sort])
        elif ch == ord("c"):
            self.say(self.src.clear(), 6.0)
            return "resample"
        elif ch in (curses.KEY_DOWN, ord("j")):
            self.top += 1
        elif ch in (curses.KEY_UP, ord("k")):
            self.top = max(0, self.top - 1)
        elif ch == curses.KEY_NPAGE:
            self.top += h - 2
        elif ch == curses.KEY_PPAGE:
            self.top = max(0, self.top - (h - 2))
        elif ch == curses.KEY_HOME:
            self.top = self.left = 0
        elif ch in (curses.KEY_RIGHT, ord("l")):
            self.left += 8
        elif ch in (curses.KEY_LEFT, ord("H")):
            self.left = max(0, self.left - 8)
        return None


def run(src, prev, interval, iterations):
    """Frames every @interval s until q (or @iterations frames, 0: no end).
    Returns 0; what src.sample() raises (pipefwd gone) ends it after the
    terminal is restored."""
    scr = curses.initscr()
    try:
        curses.noecho()
        curses.cbreak()
        scr.keypad(True)
        try:
            curses.curs_set(0)
        except curses.error:
            pass
        view = View(scr, src)
        # The first frame after a short sample, not a whole interval of blank screen.
        due, n = prev["time"] + min(interval, 0.25), 0
        view.draw()
        while iterations == 0 or n < iterations:
            wait = 0.5 if view.paused or view.help else due - time.monotonic()
            scr.timeout(max(0, int(wait * 1000)))
            ch = scr.getch()
            if ch == curses.KEY_RESIZE:
                curses.update_lines_cols()
                view.draw()
                continue
            if ch != -1:
                act = view.key(ch)
                if act == "quit":
                    break
                if act == "resample":
                    prev = src.sample()
                    due = prev["time"] + min(interval, 0.25)
                view.draw()
                continue
            if view.paused or view.help:
                view.draw()     # the message times out; the frame stays
                continue
            if time.monotonic() < due:
                continue
            cur = src.sample()
            view.frame = (cur, prev)
            view.draw()
            prev, n = cur, n + 1
            due = cur["time"] + interval
    finally:
        curses.nocbreak()
        scr.keypad(False)
        curses.echo()
        curses.endwin()
    return 0
