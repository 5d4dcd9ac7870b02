#!/usr/bin/env bash
# Cost of the read guard (src/store/read_guard.c: every HDF5 file is parsed first in a
# forked child) in one run: the same reads with the guard on and off, alternated.
#   bench/read_guard.sh [REPEATS] [search arguments...]
# Commands measured: `headfuse table --supports` and `headfuse verify` of a RESULT.h5
# (whole commands: start-up included). Shard reads: bench_read_guard.
# Default search making the file: W_3 at span 2, plain enumerator, 2 ranks.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hf=${HEADFUSE:-$root/build/headfuse}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
reps=${1:-10}
shift || true
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--family wd:d=3 --span 2 --no-prune)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun -n 2 "$hf" search "${args[@]}" --out "$tmp/r.h5" --quiet >/dev/null
echo "file: $(stat -c %s "$tmp/r.h5") bytes"

now() { date +%s.%N; }
declare -A total
for what in table verify; do
  for guard in 1 0; do total[$what$guard]=0; done
done
for ((i = 0; i < reps; i++)); do
  for guard in 1 0; do
    export HEADFUSE_READ_GUARD=$guard
    t0=$(now)
    "$hf" table "$tmp/r.h5" --supports >/dev/null
    t1=$(now)
    "$hf" verify "$tmp/r.h5" >/dev/null
    t2=$(now)
    total[table$guard]=$(awk -v s="${total[table$guard]}" -v a="$t0" -v b="$t1" 'BEGIN { print s + b - a }')
    total[verify$guard]=$(awk -v s="${total[verify$guard]}" -v a="$t1" -v b="$t2" 'BEGIN { print s + b - a }')
  done
done
unset HEADFUSE_READ_GUARD
for what in table verify; do
  awk -v w="$what" -v n="$reps" -v on="${total[${what}1]}" -v off="${total[${what}0]}" \
    'BEGIN { printf "%-7s guard on %.3f s  off %.3f s  (mean of %d)  ratio %.3f\n", w, on / n, off / n, n, on / off }'
done
