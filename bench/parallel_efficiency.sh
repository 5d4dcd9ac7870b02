#!/usr/bin/env bash
# Parallel efficiency of the search: the same job on 1 and on 2 ranks in one run,
# efficiency = T1 / (2 T2), plus each rank's idle fraction (from the search's report).
#   bench/parallel_efficiency.sh [search arguments...]
# Default job: the plain enumerator on W_3 at span 2 (3.4 million candidate supports).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hf=${HEADFUSE:-$root/build/headfuse}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--family wd:d=3 --span 2 --no-prune)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A wall
for n in 1 2; do
  start=$(date +%s.%N)
  mpirun -n "$n" "$hf" search "${args[@]}" --out "$tmp/r$n.h5" 2>"$tmp/err$n.txt" >/dev/null
  end=$(date +%s.%N)
  wall[$n]=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  echo "ranks=$n wall=$(printf %.2f "${wall[$n]}")s  $(grep 'idle fraction' "$tmp/err$n.txt" | sed 's/.*wall; //')"
done
cmp <("$hf" table "$tmp/r1.h5" --csv | cut -d, -f1-12) <("$hf" table "$tmp/r2.h5" --csv | cut -d, -f1-12) >/dev/null \
  || { echo "tables differ between 1 and 2 ranks" >&2; exit 1; }
awk -v t1="${wall[1]}" -v t2="${wall[2]}" \
  'BEGIN { printf "speedup %.2f  efficiency %.2f  (tables identical)\n", t1 / t2, t1 / (2 * t2) }'
