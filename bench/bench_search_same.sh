#!/bin/bash
# bench/bench_search_same.sh OLD_BUILD NEW_BUILD: a refactoring's proof that nothing moved
# (docs/performance.md §20): build/bench_search of two builds on the same targets, engines
# and spans, compared line by line apart from the seconds (prepare=, seconds= and the time
# ratios). Exit 0 and "identical apart from the seconds", else 1 and the diff.
set -u
old=${1:?usage: bench/bench_search_same.sh OLD_BUILD NEW_BUILD}
new=${2:?usage: bench/bench_search_same.sh OLD_BUILD NEW_BUILD}
cases=("" "chain:d=3 3 cone,layered" "wd:d=6 2 cone,layered" "chain:d=2 3 cone,layered,plain"
       "multi:d=2,k=3 3 cone,layered" "wdw:d=2 2 cone,layered,plain,auto" "chain:d=4 3 cone,auto"
       "chain:d=3 5 cone")
run() {
  for args in "${cases[@]}"; do
    echo "== bench_search $args"
    # shellcheck disable=SC2086
    "$1/bench_search" $args 2>&1
    echo "rc=$?"
  done | sed -E 's/(prepare|seconds)=[0-9.]+//g; s/time [0-9.]+x, //'
}
a=$(run "$old") b=$(run "$new")
if [ "$a" = "$b" ]; then
  echo "bench_search: ${#cases[@]} cases identical apart from the seconds ($old, $new)"
  exit 0
fi
diff <(echo "$a") <(echo "$b")
exit 1
