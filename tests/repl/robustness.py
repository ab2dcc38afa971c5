#!/usr/bin/env python3
"""Hostile input never crashes arrayc: garbage bytes, very long lines, deeply nested
parentheses, a 10 MB line. Each gives a clean error (exit 1) or a result (exit 0), in reasonable
time, and in the REPL none of them ends the session.

    robustness.py ARRAYC
"""
import os
import random
import subprocess
import sys
import tempfile
import time


def run(arrayc, source, args=(), timeout=60):
    t0 = time.time()
    p = subprocess.run([arrayc] + list(args), input=source, capture_output=True, timeout=timeout)
    return p, time.time() - t0


def main():
    arrayc = sys.argv[1]
    rnd = random.Random(1)
    ten_mb = 10 * 1024 * 1024
    cases = [
        ("deep parentheses", b"(" * 100000 + b"1" + b")" * 100000 + b"\n", 1, b"nested too deeply"),
        ("deep brackets", b"[" * 100000 + b"\n", 1, b"nested too deeply"),
        ("deep calls", b"exp(" * 50000 + b"\n", 1, b"nested too deeply"),
        ("deep unary", b"x = " + b"-" * ten_mb + b"1\n", 1, b"nested too deeply"),
        ("long sum", b"1" + b"+1" * (ten_mb // 2) + b"\n", 1, b"nested too deeply"),
        ("10 MB list", b"sum([" + b"1," * (ten_mb // 2) + b"1])\n", 0, b"5242881 : int64[]"),
        ("10 MB name", b"a" * ten_mb + b"\n", 1, b"unknown name"),
        ("10 MB comment", b"#" + b"x" * ten_mb + b"\n1 + 1\n", 0, b"2"),
        ("10 MB string", b'"' + b"s" * ten_mb + b'"\n', 0, b"sss"),
        ("10 MB garbage", bytes(rnd.getrandbits(8) for _ in range(ten_mb)), 1, b"error"),
        ("NUL bytes", b"x = 1\x00 + 2\n", 1, b"unexpected character byte 0x00"),
        ("unterminated string", b'input(f32, [3], file="x.bin)\n', 1, b"unterminated string"),
        ("huge number", b"1" * 400 + b".0\n", 1, b"out of range"),
        ("huge shape", b"zeros([1000000000000, 1000000000000])\n", 1, b"error"),
    ]
    # Command-line switches: a bad value is a usage error (exit 2) naming the option.
    huge_sin = b"sin(array([1e30], f32))\n"
    cases += [
        ("--fusion=maybe", b"1\n", 2, b"--fusion wants on or off", ["--fusion=maybe"]),
        ("--fast-math=maybe", b"1\n", 2, b"--fast-math wants on or off", ["--fast-math=maybe"]),
        ("--fast-math=on", huge_sin, 0, b"[nan] : float32[1]", ["--fast-math=on"]),
        ("--fast-math=off", huge_sin, 0, b"[-0.79116344] : float32[1]", ["--fast-math=off"]),
    ]
    failed = 0
    for name, src, want_rc, want_text, *args in cases:
        p, secs = run(arrayc, src, args[0] if args else ())
        out = p.stdout + p.stderr
        ok = p.returncode == want_rc and want_text in out and secs < 60
        print("%-20s exit %d in %5.2f s  %s" % (name, p.returncode, secs, "ok" if ok else "FAIL"))
        if not ok:
            failed += 1
            print("   output:", out[:600])

    # The REPL (-i, stdin not a terminal) survives all of it and still computes afterwards.
    session = b"\n".join([
        b"(" * 100000 + b"1" + b")" * 100000,
        b"y +* 2",
        b"nosuch(3)",
        b"ones([3]) + ones([4])",
        b"-(arange(3) > 1)",
        b":device gpu0",
        b":ptx arange(3) * 2",
        b":bogus",
        b"a" * ten_mb,
        b"x = arange(4)",
        b"x * 10",
    ]) + b"\n"
    p, secs = run(arrayc, session, ["-i"])
    out = p.stdout + p.stderr
    ok = p.returncode == 0 and b"[ 0 10 20 30] : int64[4]" in out and out.count(b"error:") == 8
    print("%-20s exit %d in %5.2f s  %s" % ("REPL survives", p.returncode, secs, "ok" if ok else "FAIL"))
    if not ok:
        failed += 1
        print(out[-3000:].decode("utf-8", "replace"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
