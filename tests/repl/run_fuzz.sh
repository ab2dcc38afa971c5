#!/usr/bin/env bash
# Builds the parser's libFuzzer target with clang (ASan + UBSan) and runs it.
#   run_fuzz.sh SOURCE_DIR WORK_DIR [libFuzzer options...]
# CI (ctest repl.fuzz_parser) runs a fixed small budget; by hand, e.g.
#   tests/repl/run_fuzz.sh . /tmp/fuzz -max_total_time=600 -jobs=2
# Exits 77 (ctest: skipped) when no clang with libFuzzer is installed
# (Debian: clang-19 libclang-rt-19-dev, see scripts/install-deps.sh).
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
shift 2
mkdir -p "$work/corpus"

cxx=""
for c in clang++-19 clang++; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [[ -z "$cxx" ]]; then
  echo "run_fuzz: no clang++ found; skipping (install clang-19 libclang-rt-19-dev)"
  exit 77
fi

bin="$work/fuzz_parser"
if [[ ! -x "$bin" || "$bin" -ot "$src/tools/arrayc/parser.cpp" || "$bin" -ot "$src/tools/arrayc/parser.h" ||
      "$bin" -ot "$src/tests/repl/fuzz_parser.cpp" ]]; then
  if ! "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I"$src/tools/arrayc" "$src/tools/arrayc/parser.cpp" "$src/tests/repl/fuzz_parser.cpp" \
      -o "$bin" 2>"$work/build.log"; then
    if grep -q -i "fuzzer" "$work/build.log"; then
      cat "$work/build.log"
      echo "run_fuzz: $cxx has no libFuzzer runtime; skipping (install libclang-rt-19-dev)"
      exit 77
    fi
    cat "$work/build.log"
    exit 1
  fi
fi

# Seeds: the golden programs. New inputs go to $work/corpus.
args=("$@")
if ((${#args[@]} == 0)); then args=(-runs=20000 -max_len=4096); fi
exec "$bin" "${args[@]}" -dict="$src/tests/repl/fuzz_parser.dict" -timeout=10 -rss_limit_mb=4096 \
  "$work/corpus" "$src/tests/repl/golden"
