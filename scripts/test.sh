#!/bin/bash
# make test: core unit tests, then the Apache::Test suite; one closing line.
set -u -o pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
scripts/unit.sh "$@" | tee "$out"
u=$?
scripts/apache-test.sh | tee -a "$out"
a=$?
read -r pass fail < <(awk '/^[a-z]+: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
                           END { print p + 0, f + 0 }' "$out")
echo "total: $pass passed, $fail failed"
[ "$u" -eq 0 ] && [ "$a" -eq 0 ] && [ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
