#!/usr/bin/env python3
"""Plots an arrayc-bench JSON file: one panel per (case, device), one bar per row (arrayc fused,
arrayc unfused, the hand-written baselines, then the peers), the median time in ms, with the
achieved rate and fraction of the ceiling written on each bar. Failed rows are shown as FAILED.

    python3 benchmarks/plot.py docs/bench/<machine>.json            # writes <machine>.png and .svg
    python3 benchmarks/plot.py RESULT.json -o out/stem              # writes out/stem.png and .svg

Needs matplotlib (Debian: python3-matplotlib); scripts/bench.sh installs it when missing.
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"fused": "#1f77b4", "unfused": "#ff7f0e", "baseline": "#2ca02c", "libmvec": "#98df8a",
          "copy": "#c7c7c7", "copy-nt": "#a0a0a0"}
PEER_COLORS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def label(row):
    if row["variant"] in ("fused", "unfused"):
        return "arrayc " + row["variant"]
    if row["variant"] in ("baseline", "libmvec", "copy", "copy-nt"):
        return row["impl"].replace(" -march=native", "")
    return row["impl"]


def annotate(row):
    parts = []
    if row.get("median_ms") is None and row.get("first_call_ms") is not None:
        parts.append("no median;\nfirst call\n%.3g ms" % row["first_call_ms"])
    if row.get("gflops") is not None:
        parts.append("%.1f GFLOP/s" % row["gflops"])
    elif row.get("gbps") is not None:
        parts.append("%.1f GB/s" % row["gbps"])
    if row.get("fraction_of_peak") is not None:
        parts.append("%.0f%%" % (100 * row["fraction_of_peak"]))
    if row.get("kernels_per_call") is not None:
        parts.append("%d kern." % row["kernels_per_call"])
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("-o", "--out", help="output stem (default: the JSON path without .json)")
    args = ap.parse_args()
    with open(args.json) as f:
        data = json.load(f)
    stem = args.out or os.path.splitext(args.json)[0]

    groups = {}
    for row in data["results"]:
        if row["case"] == "peers":
            continue
        groups.setdefault((row["case"], row["device"]), []).append(row)
    if not groups:
        sys.exit("plot.py: no results in " + args.json)

    cols = 3
    nrows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 3.9 * nrows), squeeze=False)
    for ax in axes.flat[len(groups):]:
        ax.axis("off")
    order = {"fused": 0, "unfused": 1, "baseline": 2, "libmvec": 3, "copy": 4, "copy-nt": 5, "peer": 6}
    for ax, ((case, device), rows) in zip(axes.flat, groups.items()):
        rows = sorted(rows, key=lambda r: order.get(r["variant"], 7))  # stable: peers keep their order
        names, values, colors, notes = [], [], [], []
        peer_i = 0
        for r in rows:
            names.append(label(r))
            ok = r["status"] == "ok" and r.get("median_ms") is not None
            first_only = r["status"] == "ok" and r.get("median_ms") is None and r.get("first_call_ms") is not None
            values.append(r["median_ms"] if ok else 0.0)  # a first call alone is not drawn as a bar
            if r["variant"] == "peer":
                colors.append(PEER_COLORS[peer_i % len(PEER_COLORS)])
                peer_i += 1
            else:
                colors.append(COLORS.get(r["variant"], "#333333"))
            notes.append(annotate(r) if ok or first_only else r["status"].split(":")[0])
        x = range(len(rows))
        bars = ax.bar(x, values, color=colors)
        top = max(values) if any(values) else 1.0
        for b, v, n, r in zip(bars, values, notes, rows):
            ok = r["status"] == "ok" and r.get("median_ms") is not None
            text = ("%.3g ms\n" % v if ok else "") + n
            ax.text(b.get_x() + b.get_width() / 2, (v if ok else 0) + top * 0.02, text, ha="center",
                    va="bottom", fontsize=7, color="black" if ok or r["status"] == "ok" else "red")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
        ax.set_ylim(0, top * 1.45)
        ax.set_ylabel("median ms (lower is better)", fontsize=8)
        first = rows[0]
        ceil = next((r["ceiling"] for r in rows if r.get("ceiling")), "")
        ax.set_title("%s on %s (%s, %s)%s" % (case, device, first["dtype"], first["size"],
                                               "\n%peak of: " + ceil if ceil else ""), fontsize=9)
        ax.tick_params(axis="y", labelsize=7)

    m = data.get("machine", {})
    c = data.get("ceiling", {})
    gpus = "".join("; %s %s d2d copy %.0f GB/s" % (dev, g.get("name", ""), g["copy_gbps"])
                   for dev, g in c.get("gpu", {}).items() if g.get("copy_gbps") is not None)
    fig.suptitle("arrayc-bench%s: %s, %s logical CPUs; cpu copy ceiling %.1f GB/s%s; %s" % (
        " --quick" if data.get("quick") else "", m.get("cpu_model", "?"), m.get("logical_cpus", "?"),
        c.get("copy_gbps", float("nan")), gpus, data.get("generated", "")), fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    for ext in ("png", "svg"):
        fig.savefig(stem + "." + ext, dpi=110)
        print("plot.py: wrote %s.%s" % (stem, ext))


if __name__ == "__main__":
    main()
