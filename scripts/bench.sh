#!/usr/bin/env bash
# Builds and runs the benchmark harness (docs/benchmarks.md), then writes next to its JSON the
# table (.txt) and the plots (.png, .svg).
#
#   scripts/bench.sh                      full run -> build/bench/<machine>.{json,txt,png,svg}
#   scripts/bench.sh --quick              smaller sizes, fewer repetitions -> <machine>-quick.*
#   scripts/bench.sh --json PATH          the JSON (and the table and plots beside it) at PATH;
#                                         (docs/bench/ holds the runs the docs cite: --json docs/bench/NAME.json)
#   scripts/bench.sh --peers              also install numpy/numexpr/numba (Debian) if missing
#                                         and measure them in the same run
#   scripts/bench.sh --selftest           checks that a deliberately broken result fails the run
#   scripts/bench.sh --workload W1,W2 --reps 5 --device cpu --json out.json   (passed through)
#   scripts/bench.sh --device gpu --quick  GPU only (CPU ceiling measured quickly, for the record)
#
# CPU peers (benchmarks/peers/peers_cpu.py) are measured whenever /usr/bin/python3 can import
# numpy, numexpr and numba. GPU peers (benchmarks/peers/peers_gpu.py) are measured whenever
# nvidia-smi lists a GPU and `python3` (the one on PATH:
# where PyTorch/CuPy/JAX are installed) can import torch; ONLY=w1_torch,jax,... in the environment
# restricts that script (default: all of it). The harness itself runs them only when the run has
# rows on that device. Builds with at most 2 jobs (BENCH_JOBS=1 for fewer).
# Exits with the harness's status: non-zero when any result is wrong or any case failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BENCH=build/benchmarks/arrayc-bench
PEERS_SCRIPT=benchmarks/peers/peers_cpu.py
GPU_PEERS_SCRIPT=benchmarks/peers/peers_gpu.py
JOBS=${BENCH_JOBS:-2}

install_missing() {  # Debian packages, only those missing (as scripts/install-deps.sh does)
  local missing=() pkg status
  for pkg in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "installed" ]] || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  echo "bench.sh: installing ${missing[*]}" >&2
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      if [[ -t 0 ]]; then sudo=(sudo); else sudo=(sudo -n); fi
    else
      echo "bench.sh: not root and no sudo; as root run: apt-get install -y ${missing[*]}" >&2
      return 1
    fi
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

build() {
  # Build output goes to stderr: stdout is the table.
  [[ -f build/CMakeCache.txt ]] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build build -j"$JOBS" --target arrayc-bench >&2
}

# Checks the harness's flags before building: a bad one is a usage error (exit 2) at once.
for ((i = 1; i <= $#; i++)); do
  if [[ "${!i}" == "--reps" ]]; then
    j=$((i + 1))
    if [[ ! "${!j:-}" =~ ^[1-9][0-9]{0,5}$ ]]; then
      echo "bench.sh: --reps wants a whole number from 1 to 1000000, not '${!j:-}'" >&2
      exit 2
    fi
  fi
done

selftest() {
  build
  local out rc
  echo "bench.sh --selftest: 1/2 the unbroken W2 must pass" >&2
  if ! "$BENCH" --workload W2 --quick --no-cold --no-json --reps 1 >/dev/null; then
    echo "bench.sh --selftest: FAIL: W2 fails without ARRAYC_BENCH_BREAK" >&2
    return 1
  fi
  echo "bench.sh --selftest: 2/2 ARRAYC_BENCH_BREAK=W2 must fail loudly" >&2
  set +e
  out=$(ARRAYC_BENCH_BREAK=W2 "$BENCH" --workload W2 --quick --no-cold --no-json --reps 1 2>&1)
  rc=$?
  set -e
  echo "$out" | grep -E "FAILED|ARRAYC_BENCH_BREAK" >&2 || true
  if [[ $rc -eq 0 ]]; then
    echo "bench.sh --selftest: FAIL: the broken run exited with status 0" >&2
    return 1
  fi
  if ! grep -q "W2-f32-1e6 cpu fused: FAILED: wrong result" <<<"$out"; then
    echo "bench.sh --selftest: FAIL: no 'FAILED: wrong result' for the fused W2 row" >&2
    return 1
  fi
  if grep -E "^W2-f32-1e6 +cpu +fused " <<<"$out" | grep -qE "[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+"; then
    echo "bench.sh --selftest: FAIL: a time was reported for the broken row" >&2
    return 1
  fi
  echo "bench.sh --selftest: PASS (the broken run exited with status $rc and reported no time)" >&2
}

args=()
peers_install=0
for a in "$@"; do
  case "$a" in
    --selftest) selftest; exit $? ;;
    --peers) peers_install=1 ;;
    *) args+=("$a") ;;
  esac
done

if [[ -f "$PEERS_SCRIPT" ]]; then
  ((peers_install)) && install_missing python3-numpy python3-numexpr python3-numba
  if /usr/bin/python3 -c "import numpy, numexpr, numba" 2>/dev/null; then
    args+=(--peers-script "$PEERS_SCRIPT")
  else
    echo "bench.sh: peers skipped: /usr/bin/python3 lacks numpy/numexpr/numba (run with --peers)" >&2
  fi
fi

if [[ -f "$GPU_PEERS_SCRIPT" ]]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    if python3 -c "import torch" 2>/dev/null; then
      args+=(--gpu-peers-script "$GPU_PEERS_SCRIPT")
    else
      echo "bench.sh: GPU peers skipped: python3 cannot import torch" >&2
    fi
  fi
fi

build
json=$("$BENCH" "${args[@]}" --print-json-path)
if [[ "$json" == "-" ]]; then  # --no-json: the table only
  exec "$BENCH" "${args[@]}"
fi
stem=${json%.json}
mkdir -p "$(dirname "$json")"
set +e
"$BENCH" "${args[@]}" --json "$json" | tee "$stem.txt"
rc=${PIPESTATUS[0]}
set -e
if [[ -f "$json" ]]; then
  install_missing python3-matplotlib
  /usr/bin/python3 benchmarks/plot.py "$json" -o "$stem" >&2
fi
exit "$rc"
