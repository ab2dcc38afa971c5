#!/usr/bin/env bash
# Configures and builds arrayc in ./build (Release). Arguments, if any, are build targets:
#   scripts/build.sh                 everything (library, tools, tests, benchmarks)
#   scripts/build.sh arrayc-demo     only the demo and what it needs
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
