#!/usr/bin/env bash
# Installs the Debian 12 packages that arrayc needs to build and test, and only those that are
# missing (checked with dpkg-query). Idempotent: when everything is present it changes nothing and
# does not even run apt-get update. Uses sudo when not run as root.
set -euo pipefail

PACKAGES=(
  build-essential   # g++, make
  cmake
  llvm-19-dev       # LLVM 19 libraries and CMake package (brings libffi/libxml2/libz3/ncurses dev)
  libopenblas-dev   # BLAS for matrix products
  libgtest-dev      # test suite
  libbenchmark-dev  # benchmark harness
  libedit-dev       # the rest are libraries that LLVM's CMake package looks for
  zlib1g-dev
  libzstd-dev
  clang-19          # tests/repl: libFuzzer build of the arrayc parser (skipped without it)
  libclang-rt-19-dev
  openmpi-bin       # mpirun and OpenMPI's libmpi.so.40 (loaded at run time): the tests labelled mpi
  libopenmpi3
  python3-numpy     # tests/repl/numpy_files.py: .npy/.npz/loadtxt files checked against numpy's
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} required packages are installed"
  exit 0
fi

echo "install-deps: missing packages: ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  # Without a terminal (CI), fail at once instead of waiting for a password nobody can type.
  if [[ -t 0 ]]; then SUDO=(sudo); else SUDO=(sudo -n); fi
else
  echo "install-deps: not root and sudo is not installed; as root run:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi

"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"
