#!/usr/bin/env python3
"""Golden test of the arrayc tool: runs one program and compares what it prints.

    check.py ARRAYC GOLDEN [--update]

GOLDEN is tests/repl/golden/PROG.STAGE.out or PROG.STAGE.check, next to PROG.ac. STAGE is
`run` (plain batch run) or an --emit stage (graph, optgraph, fused, kernels, llvm, opt, asm,
ptx). The program runs in the golden directory as `arrayc [--emit=STAGE] PROG.ac`; its output
is stdout followed by stderr, then a line "[exit N]" when the exit status N is not 0.

  .out    the output must equal the file exactly (--update rewrites it).
  .check  FileCheck-like lines, for text that depends on the CPU (LLVM IR, assembly):
            CHECK: s       a later line contains s
            CHECK-NEXT: s  the next line contains s
            CHECK-NOT: s   no line between the previous match and the next one contains s
            EXIT: n        the exit status (default 0)
          other lines (comments, blank) are ignored.
"""
import os
import subprocess
import sys


def run(arrayc, golden):
    d, name = os.path.split(os.path.abspath(golden))
    prog, stage = name.split(".")[0], name.split(".")[1]
    cmd = [arrayc] + ([] if stage == "run" else ["--emit=" + stage]) + [prog + ".ac"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARRAYC_DEBUG", "ARRAYC_DUMP_DIR", "ARRAYC_FUSION", "ARRAYC_DEVICE", "ARRAYC_FAST_MATH",
                        "ARRAYC_EPILOGUE")}
    p = subprocess.run(cmd, cwd=d, env=env, capture_output=True, timeout=300)
    out = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    return out, p.returncode, " ".join(cmd)


def filecheck(text, status, checks):
    lines = text.split("\n")
    cur = 0
    nots = []
    want_exit = 0
    for n, raw in enumerate(checks.split("\n"), 1):
        line = raw.strip()
        for directive in ("CHECK-NEXT:", "CHECK-NOT:", "CHECK:", "EXIT:"):
            if line.startswith(directive):
                arg = line[len(directive):].strip()
                break
        else:
            continue
        if directive == "EXIT:":
            want_exit = int(arg)
        elif directive == "CHECK-NOT:":
            nots.append((n, arg))
        elif directive == "CHECK-NEXT:":
            if cur >= len(lines) or arg not in lines[cur]:
                return "check line %d: CHECK-NEXT: %r is not on output line %d (%r)" % (
                    n, arg, cur + 1, lines[cur] if cur < len(lines) else "<end>")
            cur += 1
        else:
            found = next((i for i in range(cur, len(lines)) if arg in lines[i]), None)
            if found is None:
                return "check line %d: CHECK: %r not found after output line %d" % (n, arg, cur)
            for nn, s in nots:
                bad = next((i for i in range(cur, found) if s in lines[i]), None)
                if bad is not None:
                    return "check line %d: CHECK-NOT: %r found on output line %d" % (nn, s, bad + 1)
            nots = []
            cur = found + 1
    for nn, s in nots:
        bad = next((i for i in range(cur, len(lines)) if s in lines[i]), None)
        if bad is not None:
            return "check line %d: CHECK-NOT: %r found on output line %d" % (nn, s, bad + 1)
    if status != want_exit:
        return "exit status %d, expected %d" % (status, want_exit)
    return None


def main():
    arrayc, golden = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    out, status, cmd = run(arrayc, golden)
    if status != 0:
        out += "[exit %d]\n" % status
    if golden.endswith(".check"):
        with open(golden) as f:
            err = filecheck(out, status, f.read())
    else:
        if update:
            with open(golden, "w") as f:
                f.write(out)
            print("updated", golden)
            return 0
        with open(golden) as f:
            want = f.read()
        err = None
        if out != want:
            import difflib
            diff = "".join(difflib.unified_diff(want.splitlines(True), out.splitlines(True),
                                                "expected", "actual"))
            err = "output differs:\n" + diff
    if err:
        print("FAIL:", cmd, "(in %s)" % os.path.dirname(os.path.abspath(golden)))
        print(err)
        print("---- output ----")
        print(out[:20000])
        return 1
    print("ok:", cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
