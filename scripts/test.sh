#!/bin/bash
# make test: core unit tests, then the Apache::Test suite; one closing line.
set -u -o pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
scripts/unit.sh "$@" | tee "$out"
u=$?
scripts/apache-test.sh | tee -a "$out"
a=$?
# agentshopctl setup's root parts, only where they can run for real.
if [ "$(id -u)" -eq 0 ]; then
    t/setup-root.sh bin/agentshopctl | tee -a "$out"
    [ "${PIPESTATUS[0]}" -eq 0 ] || a=1
fi
read -r pass fail < <(awk '/^[a-z]+: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
                           END { print p + 0, f + 0 }' "$out")
echo "total: $pass passed, $fail failed"
[ "$u" -eq 0 ] && [ "$a" -eq 0 ] && [ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
