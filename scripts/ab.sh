#!/bin/sh
# In-process A/B of the search: the code of commit REV against this tree's,
# over the catalogue and long tail of a bench directory, on one core
# (bench/ab.c; docs/performance.md, "In-process A/B").
#
# usage: scripts/ab.sh REV BENCH_DIR [PATHS] [ROUNDS]
#   BENCH_DIR  what BENCH_KEEP=1 make bench leaves (its big.db and longtail.paths)
#   PATHS      request paths (default: BENCH_DIR/longtail.paths)
#   ROUNDS     rounds after the first, each search's least CPU time kept (default 5)
#
# REV is built in a git worktree (build/ab/REV) with this tree's Makefile and
# bench/ab_search.c; each side has an index of its own under build/ab (made at
# its first run, about 25 s at 1,000,000 products: the two may differ in
# format). Per-search figures go to build/ab/last.tsv. Exits 1 when a body
# differs between the two.
set -eu
[ $# -ge 2 ] || { echo "usage: scripts/ab.sh REV BENCH_DIR [PATHS] [ROUNDS]" >&2; exit 2; }
rev=$(git rev-parse --short "$1")
dir=$2
paths=${3:-$dir/longtail.paths}
rounds=${4:-5}
[ -f "$dir/big.db" ] && [ -f "$paths" ] || { echo "ab: no $dir/big.db or $paths" >&2; exit 2; }
make -s build/bench-ab build/bench-ab-search.so
wt=build/ab/$rev
[ -e "$wt/.git" ] || git worktree add -f --detach "$wt" "$rev" >/dev/null
mkdir -p "$wt/bench" build/ab/index-"$rev" build/ab/index-here
cp bench/ab_search.c "$wt/bench/"
make -s -C "$wt" -f "$(pwd)/Makefile" build/bench-ab-search.so
taskset -c 1 build/bench-ab "$wt/build/bench-ab-search.so" "build/ab/index-$rev/ab" \
    build/bench-ab-search.so build/ab/index-here/ab "$dir/big.db" "$paths" "$rounds" build/ab/last.tsv
