#!/usr/bin/env bash
# Builds arrayc and its test suite with AddressSanitizer and UndefinedBehaviorSanitizer (plus
# float-cast-overflow, which -fsanitize=undefined leaves out) in build-sanitize/, runs the suite
# with ctest and prints how many sanitizer reports it found. Exits non-zero when a test fails or
# a sanitizer reported anything.
#
#   scripts/sanitize.sh                       # the whole suite (long: about 10x the plain one)
#   scripts/sanitize.sh -R 'Reductions|Eval'  # extra arguments go to ctest: a subset
#   JOBS=1 TARGETS=arrayc_tests scripts/sanitize.sh -R BadInput
#   scripts/sanitize.sh --ci                  # what CI runs: the gtest suite built at -O1 without
#                                             # debug info (build-sanitize-ci/), a subset of it
#
# JOBS: build and test parallelism (default nproc); BUILD_JOBS: the build's alone (default JOBS).
# TARGETS: what to build (default everything). BUILD_LOCKS: lock files (space-separated) that
# stand for build slots on a shared machine: the build waits until it holds one of them (flock),
# so that it runs beside at most as many other builds as there are slots, e.g.
#   BUILD_JOBS=1 BUILD_LOCKS="/tmp/build.0.lock /tmp/build.1.lock" scripts/sanitize.sh
# Left out by default: the second run of the suite for another CPU (label host_cpu), the
# downstream install test (it links a plain project against the instrumented library) and the
# REPL's fuzzer (libFuzzer needs clang). JIT-compiled kernels are not instrumented; the code
# around them (graph building, scheduling, the executor, the thread pool) is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
dir=build-sanitize
type=RelWithDebInfo
# CI's subset: the tests whose code paths are the library's own bookkeeping (errors and bad
# input, views and indexing, the thread pool, interrupts, concurrency, the caches, jit, the
# executor, reductions and scans, the tiled product kernel's packing and blocks), about a third
# of the suite. The instrumented build is cheaper
# at -O1 without debug info; the reports still name the functions.
ci_subset='BadInput|Errors|ErrorMessages|Interrupt|ThreadPool|Concurrency|KernelCache|DiskCache|Jit|Views|Indexing|Slicing|Scatter|Gather|Npy|Interop|Reductions|SplitRounds|ReductionRounds|Scan|Sort|Printing|Executor|Schedule|Fusion|DiffTest|TiledProducts|TileKernel'
if [ "${1:-}" = "--ci" ]; then
  shift
  dir=build-sanitize-ci
  type=Release
  export TARGETS=arrayc_tests
  set -- -R "$ci_subset" "$@"
fi
flags="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=$type -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DARRAYC_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
build() {
  # shellcheck disable=SC2086
  cmake --build "$dir" -j"${BUILD_JOBS:-${JOBS:-$(nproc)}}" ${TARGETS:+--target $TARGETS}
}
if [ -z "${BUILD_LOCKS:-}" ]; then
  build
else
  built=
  while [ -z "$built" ]; do
    for lock in $BUILD_LOCKS; do
      exec 9>"$lock"
      if flock -n 9; then build; built=1; exec 9>&-; break; fi
      exec 9>&-
    done
    [ -n "$built" ] || sleep 3
  done
fi

# Every report stops its test (-fno-sanitize-recover, halt_on_error), and ctest prints the output
# of failed tests: the log holds them all.
log="$PWD/$dir/ctest.log"
export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
if [ $# -eq 0 ]; then set -- -E 'install\.downstream|repl\.'; fi
ctest --test-dir "$dir" --output-on-failure -j"${JOBS:-$(nproc)}" -LE host_cpu "$@" 2>&1 | tee "$log" || status=$?

asan=$(grep -c '^==[0-9]*==ERROR: AddressSanitizer' "$log" || true)
leaks=$(grep -c '^==[0-9]*==ERROR: LeakSanitizer' "$log" || true)
ubsan=$(grep -c 'runtime error:' "$log" || true)
echo "sanitizer reports: AddressSanitizer $asan, LeakSanitizer $leaks, UBSan $ubsan (log: $log)"
if [ "$asan" != 0 ] || [ "$leaks" != 0 ] || [ "$ubsan" != 0 ]; then
  grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" | head -40
  status=1
fi
exit $status
