#!/usr/bin/env python3
"""Exact integers in the arrayc tool (issue 26), generated cases checked against Python's ints.

    exact_ints.py ARRAYC [--seed N] [--count N]

Integers near the edges of every integer dtype (2^31, 2^32, 2^53, 2^63, 2^64, INT64_MIN...) go
through literals, arithmetic between literals, full(), arange(), list literals and scalars next
to integer arrays, and the printed values must be Python's exactly (no double in between). Values
out of a dtype's range must raise, naming the op and the dtype (numpy 2's rule: an int32 array
plus 2**40 raises).
"""
import os
import random
import re
import subprocess
import sys
import tempfile

INT_DTYPES = {  # name: (min, max)
    "int8": (-2**7, 2**7 - 1), "uint8": (0, 2**8 - 1), "int16": (-2**15, 2**15 - 1),
    "uint16": (0, 2**16 - 1), "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1),
    "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1),
}


def edge_values(rng, n):
    out = []
    for _ in range(n):
        k = rng.choice([7, 8, 15, 16, 31, 32, 52, 53, 54, 62, 63, 64])
        v = 2**k + rng.randint(-3, 3)
        out.append(-v if rng.random() < 0.4 else v)
    return out


def literal(v):
    # A negative literal is a negation in the language, as in Python.
    return "(%d)" % v if v < 0 else "%d" % v


def wrap(v, dtype):
    lo, hi = INT_DTYPES[dtype]
    m = hi - lo + 1
    return (v - lo) % m + lo


def run(arrayc, source):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.ac")
        with open(path, "w") as f:
            f.write(source)
        p = subprocess.run([arrayc, path], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, ARRAYC_CACHE="0"))
        return p.returncode, p.stdout, p.stderr


def values_of(line):
    """'[1 2 3] : int64[3]' -> ([1, 2, 3], 'int64'); '5' -> ([5], None)."""
    m = re.match(r"^(.*) : (\w+)\[[^\]]*\]$", line)
    text, dtype = (m.group(1), m.group(2)) if m else (line, None)
    return [int(x) for x in re.findall(r"-?\d+", text)], dtype


def main():
    arrayc = sys.argv[1]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 26
    count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 60
    rng = random.Random(seed)
    cases = []  # (source line, expected values, expected dtype or None)

    # Literals and arithmetic between literals: Python's ints, exact.
    for v in edge_values(rng, count):
        cases.append((literal(v), [v], None))
    for a, b in zip(edge_values(rng, count), edge_values(rng, count)):
        op = rng.choice(["+", "-", "*"])
        r = eval("%d %s %d" % (a, op, b))
        if abs(r) < 2**127:  # the tool's integers hold 127 bits (past that: an error, below)
            cases.append(("%s %s %s" % (literal(a), op, literal(b)), [r], None))
    for _ in range(count // 4):
        base, e = rng.choice([2, 3, -2, 7, 10]), rng.randint(0, 40)
        if abs(base**e) < 2**127:
            cases.append(("%d ** %d" % (base, e) if base > 0 else "(%d) ** %d" % (base, e), [base**e], None))

    # full(): exact in every integer dtype that holds the value; the default dtype is int64, or
    # uint64 past int64.
    fits = []
    for v in edge_values(rng, 3 * count):
        dtype = rng.choice(list(INT_DTYPES))
        lo, hi = INT_DTYPES[dtype]
        if lo <= v <= hi:
            fits.append((v, dtype))
            cases.append(("full([2], %s, %s)" % (literal(v), dtype), [v, v], dtype))
    for v in edge_values(rng, count):
        if -2**63 <= v < 2**64:
            cases.append(("full([], %s)" % literal(v), [v], "int64" if v < 2**63 else "uint64"))

    # arange near the edges: exact steps, in int64 (or uint64 past int64).
    for v in edge_values(rng, count):
        step = rng.choice([1, 2, 3, -1, -5])
        start, stop = v, v + 4 * step
        vals = list(range(start, stop, step))
        if all(-2**63 <= x < 2**63 for x in vals) or all(0 <= x < 2**64 for x in vals):
            dtype = "int64" if all(-2**63 <= x < 2**63 for x in vals) else "uint64"
            cases.append(("arange(%s, %s, %s)" % (literal(start), literal(stop), literal(step)), vals, dtype))

    # Lists: int64; uint64 when every element past int64's range is not negative and none is
    # below (numpy's discovery: int64 and uint64 elements together make float64, not checked).
    for _ in range(count):
        vals = edge_values(rng, rng.randint(1, 4))
        if all(-2**63 <= x < 2**63 for x in vals):
            cases.append(("[%s]" % ", ".join(literal(x) for x in vals), vals, "int64"))
        elif all(2**63 <= x < 2**64 for x in vals):
            cases.append(("[%s]" % ", ".join(literal(x) for x in vals), vals, "uint64"))

    # A scalar next to an integer array: the array's dtype, exact; integer arithmetic wraps.
    for v, dtype in fits[:count]:
        w = rng.choice([x for x in edge_values(rng, 8) if INT_DTYPES[dtype][0] <= x <= INT_DTYPES[dtype][1]] or [1])
        op = rng.choice(["+", "-", "*"])
        r = wrap(eval("%d %s %d" % (v, op, w)), dtype)
        cases.append(("full([2], %s, %s) %s %s" % (literal(v), dtype, op, literal(w)), [r, r], dtype))

    code, out, err = run(arrayc, "\n".join(c[0] for c in cases) + "\n")
    lines, buf = [], ""  # one record per value: an array's text may take several lines
    for line in out.splitlines():
        buf = buf + " " + line if buf else line
        if not buf.startswith("[") or re.search(r" : \w+\[[^\]]*\]$", buf):
            lines.append(buf)
            buf = ""
    failures = []
    if code != 0 or len(lines) != len(cases):
        failures.append("exit %d, %d lines for %d cases\n%s%s" % (code, len(lines), len(cases), out[-2000:], err[-2000:]))
    else:
        for (src, want, want_dtype), line in zip(cases, lines):
            got, dtype = values_of(line)
            if got != want or dtype != want_dtype:
                failures.append("%s\n  printed %s\n  expected %s %s" % (src, line, want, want_dtype or "(a number)"))

    # Out of a dtype's range: an error naming the op and the dtype, and the value's digits.
    errors = 0
    for v in edge_values(rng, 3 * count):
        dtype = rng.choice(list(INT_DTYPES))
        lo, hi = INT_DTYPES[dtype]
        if lo <= v <= hi or errors >= count // 2:
            continue
        errors += 1
        form = rng.choice(["full", "op"])
        if form == "full":
            src, want = "full([2], %s, %s)" % (literal(v), dtype), "full: the integer %d is out of bounds for %s" % (v, dtype)
        else:
            src, want = ("full([2], 1, %s) + %s" % (dtype, literal(v)),
                         "operator +: the integer %d is out of bounds for %s" % (v, dtype))
        code, out, err = run(arrayc, src + "\n")
        if code != 1 or want not in err:
            failures.append("%s\n  exit %d, stderr %r\n  expected an error containing %r" % (src, code, err, want))

    # Past 127 bits, arithmetic between integers raises (Python's ints have no bound).
    for src in ["2 ** 127", "(2 ** 126) * 2", "(-2) ** 127 - 1", "170141183460469231731687303715884105727 + 1"]:
        code, out, err = run(arrayc, src + "\n")
        if code != 1 or "the integer result is out of range (the tool's integers hold 127 bits)" not in err:
            failures.append("%s\n  exit %d, stderr %r\n  expected the 127-bit error" % (src, code, err))
        errors += 1

    # arange's bounds: past 2**100 in magnitude, and a first or last value out of the dtype.
    for src, want in [("arange(0, 2**120, 2**110)", "arange(): the integer 1329227995784915872903807060280344576 is out of range"),
                      ("arange(-2**63 - 1, -2**63 + 1)", "arange: the integer -9223372036854775809 is out of bounds for int64"),
                      ("arange(250, 260, 3, dtype=u8)", "arange: the integer 259 is out of bounds for uint8")]:
        code, out, err = run(arrayc, src + "\n")
        if code != 1 or want not in err:
            failures.append("%s\n  exit %d, stderr %r\n  expected an error containing %r" % (src, code, err, want))
        errors += 1

    print("%d value cases, %d error cases, %d failures" % (len(cases), errors, len(failures)))
    for f in failures[:20]:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
