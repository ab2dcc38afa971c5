#!/usr/bin/env bash
# Bad command lines of arrayc-bench are usage errors: exit status 2 and a message that names the
# problem, before anything is measured.   usage_test.sh path/to/arrayc-bench
bench=$1
fail=0
check() {  # check EXPECTED-TEXT ARGS...
  local expect=$1 out rc
  shift
  out=$("$bench" "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 || "$out" != *"$expect"* ]]; then
    echo "FAIL: arrayc-bench $* exited $rc, said: ${out%%$'\n'*}"
    fail=1
  fi
}
check "--reps wants a whole number from 1 to 1000000, not '0'" --reps 0
check "not '-2'" --reps -2
check "not 'ten'" --reps ten
check "not '3x'" --reps 3x
check "not '99999999999'" --reps 99999999999
check "--reps needs a value" --reps
check "unknown argument '--rep'" --rep 3
check "unknown variant 'fast'" --variant fast
((fail)) || echo "ok: bad arrayc-bench command lines exit 2"
exit $fail
