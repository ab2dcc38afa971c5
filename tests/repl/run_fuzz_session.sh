#!/usr/bin/env bash
# Builds the tool's evaluator fuzz target (fuzz_session.cpp: parser + evaluator + builtins + :load
# + def, on the real library) with clang's libFuzzer and UBSan, and runs it.
#   run_fuzz_session.sh SOURCE_DIR BUILD_DIR WORK_DIR [libFuzzer options...]
# BUILD_DIR is a configured build tree whose lib/libarrayc.so is built. CI (ctest
# repl.fuzz_session) runs a small fixed budget; by hand, e.g.
#   tests/repl/run_fuzz_session.sh . build /tmp/fuzzs -max_total_time=600 -jobs=16 -workers=16
# With many workers, ARRAYC_NUM_THREADS=1 keeps each worker's thread pool from oversubscribing
# the cores (one worker on a loaded 2-core machine: 1884 exec/s with 1 thread, 1542 with 16).
# The library itself is not instrumented (it is the gcc build), so the fuzzer's coverage guidance
# sees the tool's code; crashes, aborts and hangs anywhere are still found. No AddressSanitizer:
# the target limits its address space (RLIMIT_AS) so that huge arrays must fail cleanly, and ASan
# needs terabytes of it. Exits 77 (ctest: skipped) when no clang with libFuzzer is installed.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
mkdir -p "$3/corpus"
work=$(cd "$3" && pwd)  # absolute: the target changes its working directory (fuzz_session.cpp)
shift 3
cxx=""
for c in clang++-19 clang++; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [[ -z "$cxx" ]]; then
  echo "run_fuzz_session: no clang++ found; skipping (install clang-19 libclang-rt-19-dev)"
  exit 77
fi
lib="$build/lib/libarrayc.so"
[[ -f $lib ]] || { echo "run_fuzz_session: $lib is not built"; exit 1; }

tool="$src/tools/arrayc"
sources=("$tool"/{session,eval,builtins,timing,interrupt,gpu_stages,parser,transforms,integers}.cpp "$src/tests/repl/fuzz_session.cpp")
bin="$work/fuzz_session"
stale=0
[[ -x $bin && $bin -nt $lib ]] || stale=1
for f in "${sources[@]}" "$tool"/*.h; do [[ $stale == 1 || $f -nt $bin ]] && stale=1; done
if [[ $stale == 1 ]]; then
  if ! "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,undefined -fno-sanitize-recover=undefined \
      -I"$src/include" -I"$build/include" -I"$tool" "${sources[@]}" "$lib" -Wl,-rpath,"$(dirname "$lib")" \
      -o "$bin" 2>"$work/build.log"; then
    cat "$work/build.log"
    if grep -q -i "fuzzer" "$work/build.log"; then
      echo "run_fuzz_session: $cxx has no libFuzzer runtime; skipping (install libclang-rt-19-dev)"
      exit 77
    fi
    exit 1
  fi
fi

args=("$@")
if ((${#args[@]} == 0)); then args=(-runs=2000 -max_len=512); fi
cat "$src/tests/repl/fuzz_parser.dict" "$src/tests/repl/fuzz_session.dict" >"$work/dict"
# Scratch files (the target's :load directory, libFuzzer's own) go into the work directory.
mkdir -p "$work/tmp"
export TMPDIR="$work/tmp"
# The target bounds its own memory by its address space (ARRAYC_FUZZ_AS_GIB, default 16 GiB;
# fuzz_session.cpp), under which an input's huge array must fail as arrayc::Error; resident
# memory cannot exceed it. libFuzzer's own limit sits above it, so that an input which stays within
# the target's bound is not reported (at 8 GiB it was: arange(600719925) beside earlier arrays).
as_gib=${ARRAYC_FUZZ_AS_GIB:-16}
rss_mb=$(( as_gib > 0 ? (as_gib + 1) * 1024 : 8192 ))
exec "$bin" "${args[@]}" -dict="$work/dict" -timeout=30 -rss_limit_mb="$rss_mb" \
  "$work/corpus" "$src/tests/repl/golden"
