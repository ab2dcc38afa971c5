#!/usr/bin/env bash
# Quick start: installs missing Debian packages, builds everything a user runs (the library, the
# REPL `arrayc`, the demo and the benchmark harness `arrayc-bench`) and runs the demo (reference
# workloads W1 and W2 through arrayc::jit, fused and unfused). The test suite: scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh arrayc arrayc-tool arrayc-demo arrayc-bench arrayc-train-mlp
echo
status=0
build/tools/demo/arrayc-demo "$@" || status=$?
cat <<'NEXT'

Next:
  build/tools/arrayc/arrayc          the REPL (docs/repl.md): x = arange(10.0); :fused sum(x * x)
  scripts/bench.sh --quick           the benchmark harness (docs/benchmarks.md), output in build/bench/
  build/examples/arrayc-train-mlp    an MLP trained with grad and jit, printing its loss curve (docs/transforms.md)
  scripts/test.sh                    the test suite
NEXT
exit "$status"
