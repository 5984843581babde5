#!/bin/sh
# Runs the core unit test binaries (cmocka) and sums their results.
set -u
pass=0
fail=0
for t in "$@"; do
    out=$("$t" 2>&1)
    rc=$?
    echo "$out" | grep -E '^\[  (FAILED|PASSED)  \]|^\[  ERROR   \]|^\[  FAILED  \] ' 
    p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p')
    f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p')
    pass=$((pass + ${p:-0}))
    fail=$((fail + ${f:-0}))
    if [ "$rc" -ne 0 ] && [ -z "$f" ]; then fail=$((fail + 1)); echo "$out"; fi
    if [ -n "$f" ]; then echo "$out" | grep -B2 -A5 -E 'FAILED|Failure|error' | head -60; fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
