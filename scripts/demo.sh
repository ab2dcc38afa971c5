#!/usr/bin/env bash
# Quick start: installs missing Debian packages, builds the library and the demo, and runs the
# demo (reference workloads W1 and W2 through arrayc::jit, fused and unfused).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh arrayc-demo
echo
exec build/tools/demo/arrayc-demo "$@"
