#!/usr/bin/env bash
# Installs missing Debian packages, builds everything and runs the whole test suite with ctest.
# Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
