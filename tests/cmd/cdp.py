#!/usr/bin/python3
"""cdp.py - a small Chrome DevTools Protocol client for the HTML report's
tests (html_chromium.sh, html_check.py): it starts headless Chromium, opens a
file, records what the page did, takes screenshots and reads PNGs.

Why it is built this way:
- The browser talks to us over --remote-debugging-pipe (file descriptors 3
  and 4, messages ended by NUL), not over a TCP port: no port to choose, so two
  test runs at once cannot meet, and the test opens no socket at all (nor needs
  a websocket module).  The profile (--user-data-dir) is the caller's folder.
- The browser runs in its own session (process group) and is killed as a group
  on every way out (close(), atexit, SIGTERM/SIGINT/SIGHUP turned into
  SystemExit), and with PR_SET_PDEATHSIG if this process is killed outright:
  no renderer or GPU process is left behind.
- Every wait has a bound (TIMEOUT seconds), for hangs only: nothing here
  depends on how fast the machine is.
"""

import atexit
import base64
import ctypes
import fcntl
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

TIMEOUT = 90.0

# Tried in this order when OCGC_CHROMIUM is not set: Debian's real binary
# first (its /usr/bin/chromium wrapper only adds flags we set ourselves).
CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser",
              "google-chrome")


class CdpError(Exception):
    pass


def find_chromium():
    """The browser to run, or None when there is none here."""
    env = os.environ.get("OCGC_CHROMIUM")
    if env:
        return shutil.which(env)
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _child_setup(cmd_r, resp_w):
    """In the child before exec: the pipe on fds 3 (commands) and 4
    (responses), and death with its parent."""
    os.dup2(cmd_r, 3)
    os.dup2(resp_w, 4)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _high_pipe():
    """A pipe whose ends are above 4: moving them onto 3 and 4 in the child
    cannot overwrite one with the other."""
    ends = []
    for fd in os.pipe():
        ends.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5))
        os.close(fd)
    return ends


def leftovers(profile):
    """Live processes (not zombies) whose command line names PROFILE: what
    a browser using that profile left running."""
    found, key = [], profile.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                cmdline = f.read()
            with open("/proc/%s/stat" % name, "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if key in cmdline and state != b"Z":
            found.append(int(name))
    return found


def _on_signal(signum, _frame):
    raise SystemExit(128 + signum)


class Browser:
    """One headless Chromium, its pipe, and the events it sent."""

    def __init__(self, exe, profile, width=1200, height=900, log=None, extra=()):
        self.profile = os.path.abspath(profile)
        cmd_r, self._cmd_w = _high_pipe()
        self._resp_r, resp_w = _high_pipe()
        args = [exe, "--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
                "--no-first-run", "--no-default-browser-check", "--disable-gpu",
                "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
                "--force-color-profile=srgb",
                "--window-size=%d,%d" % (width, height)] + list(extra) + ["about:blank"]
        # Nothing written into the caller's home (~/.pki, ~/.cache), nor
        # into /tmp: with --disable-dev-shm-usage Chromium keeps its shared
        # memory in TMPDIR (org.chromium.Chromium.*), and leaves some behind
        # when it is stopped; in the profile, the caller removes them.
        tmp = os.path.join(self.profile, "tmp")
        os.makedirs(tmp, exist_ok=True)
        env = dict(os.environ, HOME=self.profile, TMPDIR=tmp,
                   XDG_CONFIG_HOME=self.profile, XDG_CACHE_HOME=self.profile)
        self._errlog = open(log or os.devnull, "ab")
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, _on_signal)
        self.proc = subprocess.Popen(
            args, env=env, stdin=subprocess.DEVNULL, stdout=self._errlog,
            stderr=self._errlog, start_new_session=True, pass_fds=(3, 4),
            preexec_fn=lambda: _child_setup(cmd_r, resp_w))
        atexit.register(self.close)
        os.close(cmd_r)
        os.close(resp_w)
        self._buf = b""
        self._next_id = 0
        self.events = []
        self.session = None

    def close(self):
        """Kill the browser's whole process group and reap the browser, then
        the crash handlers, which make sessions of their own."""
        if self.proc is None:
            return
        pid, self.proc = self.proc.pid, None
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        deadline = time.monotonic() + TIMEOUT
        while leftovers(self.profile) and time.monotonic() < deadline:
            for left in leftovers(self.profile):
                try:
                    os.kill(left, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        for fd in (self._cmd_w, self._resp_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self._errlog.close()

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("no answer from the browser in %g s" % TIMEOUT)
            ready, _, _ = select.select([self._resp_r], [], [], left)
            if ready:
                chunk = os.read(self._resp_r, 1 << 20)
                if not chunk:
                    raise CdpError("the browser closed its pipe (it died)")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True):
        """Call METHOD; its result, events seen meanwhile kept in .events."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._cmd_w, data):]
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") != self._next_id:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise CdpError("%s: %s" % (method, reply["error"]))
            return reply.get("result", {})

    def wait_event(self, method):
        """Wait until an event METHOD is among .events (which the caller
        emptied before causing it: it may come before a command's reply)."""
        deadline = time.monotonic() + TIMEOUT
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read_message(deadline))

    def open_page(self, url):
        """A new tab, attached, with Page, Runtime, Log and Network on before
        it loads URL (so its first request is seen); returns once loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, False)
        att = self.send("Target.attachToTarget",
                        {"targetId": target["targetId"], "flatten": True}, False)
        self.session = att["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.events = []
        nav = self.send("Page.navigate", {"url": url})
        if nav.get("errorText"):
            raise CdpError("cannot open %s: %s" % (url, nav["errorText"]))
        self.wait_event("Page.loadEventFired")
        # A frame painted after the load: what the page drew is on screen.
        self.evaluate("new Promise(r => requestAnimationFrame(() => "
                      "requestAnimationFrame(() => r(document.readyState))))")

    def evaluate(self, expr):
        """The value of EXPR (a promise is awaited); an exception raises."""
        res = self.send("Runtime.evaluate",
                        {"expression": expr, "returnByValue": True,
                         "awaitPromise": True})
        if "exceptionDetails" in res:
            raise CdpError("evaluate: %s" % res["exceptionDetails"])
        return res["result"].get("value")

    def screenshot(self, scale=1.0, height=None):
        """PNG bytes of the whole page (not only the window), at SCALE; only
        its first HEIGHT CSS pixels if HEIGHT is given."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"],
                "height": min(height or size["height"], size["height"]),
                "scale": scale}
        res = self.send("Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": True,
                         "clip": clip})
        return base64.b64decode(res["data"])


# ---- PNG ------------------------------------------------------------------

def png_info(data):
    """(width, height, colour type, raw scanlines) of an 8-bit PNG; raises
    ValueError if it is not one."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if zlib.crc32(ctype + body) != crc:
            raise ValueError("bad CRC in chunk %r" % ctype)
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat.append(body)
        elif ctype == b"IEND":
            break
        pos += 12 + length
    if ihdr is None or ihdr[2] != 8 or ihdr[3] not in (2, 6) or ihdr[6]:
        raise ValueError("not an 8-bit RGB(A) non-interlaced PNG: %r" % (ihdr,))
    return ihdr[0], ihdr[1], ihdr[3], zlib.decompress(b"".join(idat))


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter_row(ftype, row, prior, bpp):
    out = bytearray(row)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        if ftype == 1:
            out[i] = (out[i] + a) & 255
        elif ftype == 2:
            out[i] = (out[i] + b) & 255
        elif ftype == 3:
            out[i] = (out[i] + ((a + b) >> 1)) & 255
        elif ftype == 4:
            out[i] = (out[i] + _paeth(a, b, c)) & 255
    return out


def png_pixels(data):
    """(width, height, [(r, g, b), ...]) of an 8-bit RGB(A) PNG.  Pure
    Python: meant for small (scaled-down) pictures."""
    width, height, ctype, raw = png_info(data)
    bpp = 3 if ctype == 2 else 4
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        raise ValueError("scanlines are %d bytes, not %d"
                         % (len(raw), height * (stride + 1)))
    prior, pixels = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        row = _unfilter_row(raw[start], raw[start + 1:start + 1 + stride],
                            prior, bpp)
        pixels.extend(tuple(row[x:x + 3]) for x in range(0, stride, bpp))
        prior = row
    return width, height, pixels


def main(argv):
    """For the shell tests: `cdp.py which` (the browser's path; exit 77 if
    none), `cdp.py leftovers PROFILE` (pids, one a line), `cdp.py kill
    PROFILE` (SIGKILL them: a test's exit trap)."""
    if argv[1:] == ["which"]:
        exe = find_chromium()
        print(exe or "no Chromium here (Debian: apt-get install chromium)")
        return 0 if exe else 77
    if len(argv) == 3 and argv[1] in ("leftovers", "kill"):
        for pid in leftovers(os.path.abspath(argv[2])):
            if argv[1] == "kill":
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            print(pid)
        return 0
    print("usage: cdp.py which | leftovers PROFILE | kill PROFILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
