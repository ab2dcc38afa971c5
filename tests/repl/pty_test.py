#!/usr/bin/env python3
"""Drives the interactive arrayc REPL through a pseudo-terminal, as a person would: types a
program (one statement over two lines), completes a name with Tab, asks for :fused and :ptx,
makes a mistake, recalls a line with the up arrow, quits, and checks what the screen showed and
that the history file kept the lines.

    pty_test.py ARRAYC
"""
import os
import pty
import re
import select
import signal
import struct
import sys
import tempfile
import time

try:
    import fcntl
    import termios
except ImportError:  # not a POSIX system
    sys.exit(77)

ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x07|\r")


class Terminal:
    def __init__(self, argv, env):
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(argv[0], argv, env)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
        self.raw = b""
        self.mark = 0  # expect() looks at the screen text after this point

    def screen(self):
        return ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.raw += data
        return True

    def expect(self, text, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            s = self.screen()
            i = s.find(text, self.mark)
            if i >= 0:
                self.mark = i + len(text)
                return
            if not self.read(0.2) and self.exited():
                break
        raise AssertionError("expected %r on the screen; it shows:\n%s" % (text, self.screen()[-3000:]))

    def type(self, keys, delay=0.05):
        for ch in keys:  # one key at a time, like a person
            os.write(self.fd, ch.encode() if isinstance(ch, str) else ch)
            time.sleep(delay / 5)
            self.read(0)
        time.sleep(delay)

    def exited(self):
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.status = status
        return True

    def wait_exit(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            self.read(0.1)
            if self.exited():
                return os.waitstatus_to_exitcode(self.status)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("arrayc did not exit; screen:\n" + self.screen()[-2000:])


UP = "\x1b[A"


def main():
    arrayc = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as home:
        env = {"HOME": home, "TERM": "xterm", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "LANG": "C.UTF-8"}
        t = Terminal([arrayc], env)
        t.expect(":help for help")
        t.expect(">>> ")
        t.type("x = arange(1000000.0) / 1000000.0 - 0.5\r")
        t.expect(">>> ")
        # One statement over two lines: the open parenthesis asks for more.
        t.type("y = 1.05 * where(x > 0, x,\r")
        t.expect("... ")
        t.type("1.67 * exp(x) - 1.67)\r")
        t.expect(">>> ")
        # Tab completes an op name ("tra" -> "transpose").
        t.type("sum(tra\t")
        t.type("(y))\r")
        t.expect("transpose(y))")
        t.expect("-55552.11928")
        t.expect(": float64[]")
        t.expect(">>> ")
        t.type(":fused y\r")
        t.expect("kernel 0: fused_")
        t.expect("materializes")
        t.expect(">>> ")
        t.type(":ptx y\r")
        t.expect(".target sm_90")
        t.expect(">>> ")
        # A mistake: reported with a caret, and the REPL goes on.
        t.type("y +* 2\r")
        t.expect("1:4: error: expected an expression, found '*'")
        t.expect("^")
        t.expect(">>> ")
        # History: up three times is ":fused y" again.
        t.type(UP + UP + UP)
        t.type("\r")
        t.expect("kernel 0: fused_")
        t.expect(">>> ")
        t.type(":quit\r")
        status = t.wait_exit()
        assert status == 0, "exit status %d" % status

        hist_path = os.path.join(home, ".arrayc_history")
        assert os.path.exists(hist_path), "no history file in HOME"
        with open(hist_path, "rb") as f:
            hist = f.read().decode("utf-8", "replace")
        # libedit writes spaces as \040 in its history file.
        hist = hist.replace("\\040", " ")
        for line in (":fused y", ":ptx y", "sum(transpose(y))"):
            assert line in hist, "%r not in the history file:\n%s" % (line, hist)

        # A new session remembers: after two new lines, up four times passes them and ":quit"
        # and recalls ":fused y" from the last session.
        t = Terminal([arrayc], env)
        t.expect(">>> ")
        t.type("x = arange(3)\r")
        t.expect(">>> ")
        t.type("y = x * 2\r")
        t.expect(">>> ")
        t.type(UP + UP + UP + UP + "\r")
        t.expect("kernel 0: ")
        t.expect(">>> ")
        t.type("\x04")  # Ctrl-D leaves too
        status = t.wait_exit()
        assert status == 0, "exit status %d" % status
    print("ok: the REPL through a pseudo-terminal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
