#!/usr/bin/env bash
# Issue 29's CPU products in one go: OpenBLAS's core/thread calibration, the W3/W4/W5/W9 rows
# of arrayc (epilogue fused and not), then numpy's and PyTorch's times for the same shapes.
#
#   bash benchmarks/matmul_host.sh [--big] [--reps N]
#
# From the repository root. It runs arrayc-matmul-bench from a bundle (.gpu/run, made on the
# build machine: the executable and its libraries with a `run` script that sets the paths) when
# there is one, else build/benchmarks/arrayc-matmul-bench. Run it on a quiet machine. The peers run
# with $PYTHON (default python3: the one with numpy and, where installed, PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) ; $(nproc) CPUs ; $(date -u '+%F %T') UTC ; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -f .gpu/run ]]; then
  bash .gpu/run arrayc-matmul-bench "$@"
else
  build/benchmarks/arrayc-matmul-bench "$@"
fi
echo
echo "== peers"
"${PYTHON:-python3}" benchmarks/peers/matmul_peers.py "$@"
