#!/usr/bin/env python3
"""The program of the issue runs as written in batch mode and prints the sum numpy gives (with
numpy when it is installed, else the same float64 arithmetic in Python with an exact sum), and
every --emit stage prints for it.

    selu_reference.py ARRAYC PROGRAM
"""
import math
import subprocess
import sys


def reference():
    try:
        import numpy as np
        x = np.arange(1000000.0) / 1000000.0 - 0.5
        y = 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)
        return float(np.sum(y)), "numpy"
    except ImportError:
        total = []
        for i in range(1000000):
            x = i / 1000000.0 - 0.5
            total.append(1.05 * (x if x > 0 else 1.67 * math.exp(x) - 1.67))
        return math.fsum(total), "python float64 + fsum"


def main():
    arrayc, prog = sys.argv[1], sys.argv[2]
    p = subprocess.run([arrayc, prog], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr)
    value_text, _, type_text = p.stdout.strip().partition(" : ")
    assert type_text == "float64[]", "printed %r" % p.stdout
    got = float(value_text)
    want, how = reference()
    rel = abs(got - want) / abs(want)
    print("arrayc: %r  reference (%s): %r  relative difference %.2e" % (got, how, want, rel))
    assert rel < 1e-12, "the sum differs from the reference"

    for stage in ("graph", "optgraph", "fused", "kernels", "llvm", "opt", "asm", "ptx"):
        p = subprocess.run([arrayc, "--emit=" + stage, prog], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0 and p.stdout.strip(), "--emit=%s failed: %s" % (stage, p.stderr)
        print("--emit=%-8s %6d lines" % (stage, p.stdout.count("\n")))
    # PTX for a chosen GPU generation needs no GPU.
    p = subprocess.run([arrayc, "--emit=ptx", "--sm=sm_80", prog], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and ".target sm_80" in p.stdout, p.stderr
    print("--emit=ptx --sm=sm_80 %d lines" % p.stdout.count("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
