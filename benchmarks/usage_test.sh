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

# A GPU peers script's lines name their cases by workload, size and dtype word.
peers=$(mktemp --suffix=.py)
trap 'rm -f "$peers"' EXIT
cat > "$peers" <<'PY'
print("G1 take 1e7 f32                cupy.take                          0.1000 ms 1600 GB/s")
print("W8 8-op chain 1e8 f16          torch.compile (fused)              0.2000 ms")
print("W8 8-op chain 1e8 f32          torch.compile (fused)              0.3000 ms")
print("cumsum f32 1e8                 cupy.cumsum                        0.4000 ms")
PY
rows=$("$bench" --test-gpu-peers "$peers" 2>/dev/null | grep -o 'case=[^[:space:]]*' | tr '\n' ' ')
if [[ "$rows" != "case=G1-f32-1e7 case=W8-f16-1e8 case=W8-f32-1e8 case=cumsum-f32-1e8 " ]]; then
  echo "FAIL: GPU peer lines gave the cases: $rows"
  fail=1
fi
((fail)) || echo "ok: GPU peer lines name their cases"
exit $fail
