#!/usr/bin/env bash
# Builds arrayc's test suite with ThreadSanitizer in build-tsan/ and runs the concurrency tests
# under it: Concurrency.* (8 threads x ARRAYC_CONCURRENCY_CALLS calls each, default 1000 here: one
# shared jit function and one per thread, new shapes mixed in, eager ops alongside, copies of one
# unevaluated Array read from every thread, results checked) and the suite's other threaded tests.
# Prints the number of races reported; exits non-zero when a test fails or TSan reported anything.
#
#   scripts/tsan.sh                        # build and run
#   scripts/tsan.sh --gtest_filter='Eval*' # extra arguments go to arrayc_tests (replace the filter)
#   SKIP_BUILD=1 scripts/tsan.sh           # run what build-tsan/ holds (built some other way)
#
# JOBS: build parallelism (default nproc). JIT-compiled kernels and the prebuilt OpenBLAS are not
# instrumented; the code around them (graph building, jit tracing, the kernel cache, the executor,
# the thread pool) is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dir=build-tsan
flags="-fsanitize=thread -fno-omit-frame-pointer -g"
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARRAYC_BUILD_BENCHMARKS=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake --build "$dir" -j"${JOBS:-$(nproc)}" --target arrayc_tests
fi

log="$PWD/$dir/tsan.log"
export ARRAYC_CACHE=0 ARRAYC_CONCURRENCY_CALLS="${ARRAYC_CONCURRENCY_CALLS:-1000}"
# halt_on_error=0: every race is reported once (by its pair of stacks) and the run goes on.
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp ${TSAN_OPTIONS:-}"
if [ $# -eq 0 ]; then
  # Not DiskCacheTest.*: it forks from a threaded process, which TSan does not support.
  set -- --gtest_filter='Concurrency.*:*Thread*:*thread*:Evaluation*:*Jit*:*jit*-DiskCacheTest.*'
fi
status=0
"$dir/tests/arrayc_tests" "$@" 2>&1 | tee "$log" || status=$?
races=$(grep -c '^WARNING: ThreadSanitizer: data race' "$log" || true)
other=$(grep '^WARNING: ThreadSanitizer:' "$log" | grep -vc 'data race' || true)
echo "ThreadSanitizer reports: $races data races, $other others (log: $log)"
if [ "$races" != 0 ] || [ "$other" != 0 ]; then status=1; fi
exit $status
