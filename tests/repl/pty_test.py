#!/usr/bin/env python3
"""Drives the interactive arrayc REPL through a pseudo-terminal, as a person would: types a
program (one statement over two lines), completes a name with Tab, asks for :fused and :ptx,
makes a mistake, recalls a line with the up arrow, quits, and checks what the screen showed and
that the history file kept the lines. Then: Ctrl-C at the prompt (drops the line) and during a
computation (stops it, the variables stay), completion of commands, of file names after :load
and of dtypes, Ctrl-L, and in batch runs: Ctrl-C (exit status 130), :help's text, a file that
loads itself.

    pty_test.py ARRAYC
"""
import os
import pty
import re
import select
import signal
import struct
import subprocess
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
    def __init__(self, argv, env, cwd=None):
        pid, fd = pty.fork()
        if pid == 0:
            if cwd:
                os.chdir(cwd)
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

    def wait_exit(self, timeout=30, again=None):
        """Waits for the exit. `again`: keys to send once more if 10 s pass without it. Once,
        on a loaded 2-core machine, the REPL kept waiting after a Ctrl-D at its prompt; the
        cause is not known (perhaps the key reached the terminal while it was still in
        canonical mode, where an end-of-file marker can be lost when libedit switches to raw
        mode). Said on stderr when it was needed."""
        end = time.time() + timeout
        nudge = time.time() + 10 if again else None
        while time.time() < end:
            self.read(0.1)
            if self.exited():
                return os.waitstatus_to_exitcode(self.status)
            if nudge and time.time() > nudge:
                sys.stderr.write("note: no exit 10 s after the keys; sending them again\n")
                self.type(again)
                nudge = None
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("arrayc did not exit; screen:\n" + self.screen()[-2000:])


UP = "\x1b[A"
CTRL_C, CTRL_L = "\x03", "\x0c"
# Long enough to interrupt (about 5 s on two idle cores): a fused reduction, split into chunks
# that each take a fraction of it; Ctrl-C stops it at the next chunk. If it finished first, it
# would print its value instead of "interrupted".
LONG = "sum(sin(arange(2000000000.0)))"


def interactive_extras(arrayc, env, work):
    """Ctrl-C, completion and Ctrl-L in a third session."""
    with open(os.path.join(work, "prog_one.ac"), "w") as f:
        f.write("w = 7\nw * 6\n")
    t = Terminal([arrayc], env, cwd=work)
    t.expect(">>> ")
    t.type("v = arange(5)\r")
    t.expect(">>> ")
    # Ctrl-C at the prompt drops the line, and a multi-line input, and the REPL goes on.
    t.type("abc")
    t.type(CTRL_C)
    t.expect("^C")
    t.expect(">>> ")
    t.type("z = (1 +\r")
    t.expect("... ")
    t.type(CTRL_C)
    t.expect("^C")
    t.expect(">>> ")
    t.type("40 + 2\r")
    t.expect("42")
    t.expect(">>> ")
    assert "unknown name 'abc'" not in t.screen(), t.screen()[-2000:]
    # Ctrl-C during a computation stops it at a chunk boundary; v keeps its value.
    t.type(LONG + "\r", delay=0.01)
    time.sleep(1.0)
    start = time.time()
    t.type(CTRL_C)
    t.expect("interrupted", timeout=180)
    print("Ctrl-C stopped the computation after %.1f s" % (time.time() - start))
    t.expect(">>> ")
    t.type("v\r")
    t.expect("[0 1 2 3 4] : int64[5]")
    t.expect(">>> ")
    # Tab completes a command, a file name after :load, a dtype.
    t.type(":fuse\t")
    t.type(" v + 1\r")
    t.expect(":fused v + 1")
    t.expect("kernel 0: add")
    t.expect(">>> ")
    t.type(":load prog_o\t")
    t.type("\r")
    t.expect(":load prog_one.ac")
    t.expect("42")
    t.expect(">>> ")
    t.type("zeros(2, int3\t")
    t.type(")\r")
    t.expect("zeros(2, int32)")
    t.expect("[0 0] : int32[2]")
    t.expect(">>> ")
    # Ctrl-L clears the screen (the terminal's clear sequence) and redraws the prompt.
    before = len(t.raw)
    t.type(CTRL_L)
    t.expect(">>> ")
    cleared = t.raw[before:]
    assert b"\x1b[2J" in cleared or b"\x1b[J" in cleared, "Ctrl-L sent %r" % cleared
    t.type(":quit\r")
    status = t.wait_exit()
    assert status == 0, "exit status %d" % status


def batch_checks(arrayc, work):
    """Ctrl-C in a batch run, :help's text, a file that loads itself."""
    p = subprocess.Popen([arrayc, "-c", LONG], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=180)
    assert p.returncode == 130, "batch run after Ctrl-C: exit %d, stderr %r" % (p.returncode, err)
    assert b"interrupted" in err, err

    help_all = subprocess.run([arrayc, "-c", ":help"], capture_output=True, text=True).stdout
    assert ":ptx" in help_all and "CUDA" not in help_all, help_all
    ops = subprocess.run([arrayc, "-c", ":help ops"], capture_output=True, text=True).stdout
    listed = [l for l in ops.splitlines() if l.lstrip().startswith("astype(")]
    assert len(listed) == 1, "astype listed %d times:\n%s" % (len(listed), ops)

    selfload = os.path.join(work, "self.ac")
    with open(selfload, "w") as f:
        f.write(":load self.ac\n")
    r = subprocess.run([arrayc, "self.ac"], capture_output=True, text=True, cwd=work, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "more than 16 deep" in r.stderr, r.stderr
    assert r.stderr.count(": error: ") == 2, r.stderr  # the innermost :load, then the outermost


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
        # Tab completes an op name ("trans" -> "transpose"; "tra" is also "trace").
        t.type("sum(trans\t")
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
        status = t.wait_exit(again="\x04")
        assert status == 0, "exit status %d" % status

        work = os.path.join(home, "work")
        os.mkdir(work)
        interactive_extras(arrayc, env, work)
        batch_checks(arrayc, work)
    print("ok: the REPL through a pseudo-terminal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
