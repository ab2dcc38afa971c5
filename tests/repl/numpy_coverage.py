#!/usr/bin/env python3
"""Keeps docs/numpy_coverage.md true: every name in the REPL column of a Y row is a builtin of
the REPL (`:help NAME` knows it), every name in the C++ column is declared in a public header
(include/arrayc/*.h), an N row's numpy name is neither (else it should be Y), a Y row whose
numpy name is a builtin names it, and the counts table matches the rows.

    numpy_coverage.py ARRAYC SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys

ROW = re.compile(r"^\| `([A-Za-z0-9_]+)` \| (Y|N) \|([^|]*)\|([^|]*)\|")
COUNT = re.compile(r"^\| (Y|N|total) \| (\d+) \|$")


def names(cell):
    return re.findall(r"`([^`]+)`", cell)


def declared(name, headers):
    """A free function `R name(` (R: Array, std::vector<Array>, void, maybe inline) or, for
    Array::name, a member `name(` of array.h."""
    if name.startswith("Array::"):
        member = re.escape(name[len("Array::"):])
        return re.search(r"^\s+[A-Za-z0-9_:&<> ]+\s" + member + r"\(\)", headers["array.h"], re.M) is not None
    pat = re.compile(r"^\s*(?:inline\s+)?(?:Array|std::vector<Array>|void)\s+" + re.escape(name) + r"\(", re.M)
    return any(pat.search(text) for text in headers.values())


def main():
    arrayc, src = sys.argv[1], sys.argv[2]
    doc = open(os.path.join(src, "docs", "numpy_coverage.md"), encoding="utf-8").read().splitlines()
    headers = {os.path.basename(p): open(p, encoding="utf-8").read()
               for p in glob.glob(os.path.join(src, "include", "arrayc", "*.h"))}
    rows, counts = [], {}
    for line in doc:
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2), names(m.group(3)), names(m.group(4))))
        m = COUNT.match(line)
        if m:
            counts[m.group(1)] = int(m.group(2))
    errors = []
    if not rows:
        errors.append("no table rows found")

    # Every name the REPL is asked about, once, in one process.
    asked = sorted({n for _, _, _, repl in rows for n in repl} | {n for n, _, _, _ in rows})
    program = "".join(":help %s\n" % n for n in asked)
    p = subprocess.run([arrayc, "-c", program], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        errors.append("arrayc -c ':help ...' exited %d: %s" % (p.returncode, p.stderr))
    unknown = set(re.findall(r"^no help on '([^']+)'", p.stdout, re.M))
    builtin = lambda n: n not in unknown

    seen = set()
    for numpy, status, cpp, repl in rows:
        if numpy in seen:
            errors.append("%s: listed twice" % numpy)
        seen.add(numpy)
        if status == "Y":
            if not cpp:
                errors.append("%s: Y but no C++ name" % numpy)
            for n in cpp:
                if not declared(n, headers):
                    errors.append("%s: Y but C++ '%s' is not declared in include/arrayc/*.h" % (numpy, n))
            for n in repl:
                if n != "—" and not builtin(n):
                    errors.append("%s: Y but '%s' is not a REPL builtin (:help %s)" % (numpy, n, n))
            if numpy not in repl and builtin(numpy):
                errors.append("%s: the REPL has a builtin '%s'; name it in the REPL column" % (numpy, numpy))
        else:
            if cpp or repl:
                errors.append("%s: N but names arrayc functions" % numpy)
            if builtin(numpy):
                errors.append("%s: N but '%s' is a REPL builtin; check its semantics and flip to Y" % (numpy, numpy))
            if declared(numpy, headers):
                errors.append("%s: N but arrayc::%s is declared; check its semantics and flip to Y" % (numpy, numpy))

    n_y = sum(1 for r in rows if r[1] == "Y")
    want = {"Y": n_y, "N": len(rows) - n_y, "total": len(rows)}
    if counts != want:
        errors.append("counts table says %s, the rows give %s" % (counts, want))
    if n_y and not any(("%d of %d" % (n_y, len(rows))) in line for line in doc):
        errors.append("the text does not say '%d of %d'" % (n_y, len(rows)))

    for e in errors:
        print("numpy_coverage.md: " + e)
    print("%d rows, %d Y, %d REPL names asked" % (len(rows), n_y, len(asked)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
