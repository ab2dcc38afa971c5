#!/usr/bin/env python3
"""Two builds of arrayc side by side: runs two arrayc-bench executables in alternation
(A B A B ...) on the same machine, in one invocation, and prints per row the median of each
build's medians and their ratio. For "did this change cost speed?" questions.

  benchmarks/compare_builds.py BEFORE_BENCH AFTER_BENCH [--rounds N] -- [arrayc-bench args...]

e.g. benchmarks/compare_builds.py old/arrayc-bench build/benchmarks/arrayc-bench --rounds 3 -- \
       --workload W1,W2,W7,W8 --device cpu --variant fused --no-cold

Each round runs both executables once with the same arguments (plus --json to a temporary
file); the order within a round alternates, so that neither build always runs first. A row is
(case, device, variant, implementation); after/before < 1 means the second build is faster.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def usage(msg):
    print(f"compare_builds: {msg}\n" + __doc__.split("\n\n")[1], file=sys.stderr)
    sys.exit(2)


def main(argv):
    if "--" in argv:
        split = argv.index("--")
        own, bench_args = argv[:split], argv[split + 1:]
    else:
        own, bench_args = argv, []
    rounds = 3
    if "--rounds" in own:
        i = own.index("--rounds")
        try:
            rounds = int(own[i + 1])
        except (IndexError, ValueError):
            usage("--rounds needs a whole number")
        if rounds < 1:
            usage(f"--rounds must be at least 1, got {rounds}")
        del own[i:i + 2]
    if len(own) != 2:
        usage("give two arrayc-bench executables")
    for exe in own:
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            usage(f"{exe} is not an executable file")
    names = ["before", "after"]
    medians = {}  # (row key) -> {name: [median per round]}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            order = [0, 1] if r % 2 == 0 else [1, 0]
            for k in order:
                out = os.path.join(tmp, f"{names[k]}{r}.json")
                cmd = [own[k]] + bench_args + ["--json", out]
                print(f"round {r + 1}/{rounds}, {names[k]}: {' '.join(cmd)}", file=sys.stderr, flush=True)
                res = subprocess.run(cmd, stdout=subprocess.DEVNULL)
                if res.returncode != 0:
                    print(f"compare_builds: {names[k]} exited with {res.returncode}", file=sys.stderr)
                    sys.exit(1)
                with open(out) as f:
                    for row in json.load(f)["results"]:
                        if row.get("status") != "ok" or row.get("median_ms") is None:
                            continue
                        key = (row["case"], row["device"], row["variant"], row["impl"])
                        medians.setdefault(key, {n: [] for n in names})[names[k]].append(row["median_ms"])
    header = f"{'case':<14} {'device':<6} {'variant':<9} {'impl':<8} {'before ms':>11} {'after ms':>11} {'after/before':>12}"
    print(header)
    print("-" * len(header))
    for key, by in medians.items():
        if not by["before"] or not by["after"]:
            continue
        b, a = statistics.median(by["before"]), statistics.median(by["after"])
        impl = key[3].split()[0][:8]
        print(f"{key[0]:<14} {key[1]:<6} {key[2]:<9} {impl:<8} {b:>11.5f} {a:>11.5f} {a / b:>12.3f}")
    print(f"\n{rounds} round(s) of each build, alternating; each cell is the median of the builds' per-run medians.")


if __name__ == "__main__":
    main(sys.argv[1:])
