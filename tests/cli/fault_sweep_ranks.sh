# Faults on ONE rank of a 2-rank search (HEADFUSE_FAULT_RANK, docs/reliability.md): a
# store write call or an allocation failing on rank 1 only, then on rank 0 only. No
# rank may be left waiting for the other (a hang fails the test after 60 s); the job
# exits nonzero without a crash, exactly one "headfuse search:" line carries the
# failing rank's own message (naming the rank when it is not 0, and the shard file for
# a write fault), no RESULT.h5 or .tmp is left, and `--resume` gives the table of an
# uninterrupted run. HF_SWEEP_RANK_SAMPLES (default 10) N per rank and kind, spread
# over the rank's own count of fault points.
. "$HF_SOURCE_DIR/tests/lib.sh"

samples=${HF_SWEEP_RANK_SAMPLES:-10}
spec=(search --family wd:d=2 --span 2 --quiet)

HEADFUSE_FAULT_COUNT=1 mpi 2 "${spec[@]}" --out ref.h5 >out.txt 2>err.txt ||
  fail "the run without faults failed: $(cat err.txt)"
want=$(table_json ref.h5)
# count KIND RANK: that rank's number of fault points of one kind
count() {
  sed -n "s/.*$1=\([0-9]*\).*rank $2).*/\1/p" err.txt | head -1
}
declare -A W A
for r in 0 1; do
  W[$r]=$(count h5_write $r)
  A[$r]=$(count alloc $r)
  [ "${W[$r]:-0}" -gt 0 ] && [ "${A[$r]:-0}" -gt 0 ] || fail "no counts for rank $r: $(cat err.txt)"
done
echo "counts: rank 0: ${W[0]} write calls, ${A[0]} allocations; rank 1: ${W[1]} write calls, ${A[1]} allocations"

spread() {
  if [ "$2" -ge "$1" ]; then
    seq 1 "$1"
  else
    for i in $(seq 0 $(($2 - 1))); do echo $((1 + i * ($1 - 1) / ($2 - 1))); done
  fi
}

tried=0
# fault RANK VAR N
fault() {
  local rank=$1 var=$2 n=$3 rc
  rm -rf r.h5 r.h5.tmp r.h5.shards
  set +e
  env HEADFUSE_FAULT_RANK="$rank" "$var=$n" timeout 60 mpirun --oversubscribe -n 2 \
    "$HEADFUSE" "${spec[@]}" --out r.h5 >out.txt 2>err.txt
  rc=$?
  set -e
  tried=$((tried + 1))
  [ "$rc" != 124 ] || fail "rank $rank $var=$n: the job hung (killed after 60 s)"
  if [ "$rc" = 0 ] || [ "$rc" -ge 128 ]; then
    cat err.txt >&2
    fail "rank $rank $var=$n: exit status $rc, expected an error status below 128"
  fi
  local lines
  lines=$(grep -c '^headfuse search: ' err.txt || true)
  [ "$lines" = 1 ] || { cat err.txt >&2; fail "rank $rank $var=$n: $lines error lines, expected one"; }
  if [ "$rank" = 1 ]; then
    grep -q '^headfuse search: rank 1: ' err.txt ||
      fail "rank 1 $var=$n: the message does not come from rank 1: $(cat err.txt)"
  fi
  if [ "$var" = HEADFUSE_FAIL_H5_WRITE ]; then
    grep -q 'r\.h5' err.txt || fail "rank $rank $var=$n: the message names no file: $(cat err.txt)"
  else
    grep -q 'out of memory' err.txt || fail "rank $rank $var=$n: not out of memory: $(cat err.txt)"
  fi
  [ ! -e r.h5.tmp ] || fail "rank $rank $var=$n: r.h5.tmp left behind"
  [ ! -e r.h5 ] || "$HEADFUSE" verify r.h5 >/dev/null 2>&1 ||
    fail "rank $rank $var=$n: a RESULT that verify refuses"
  mpi 2 "${spec[@]}" --out r.h5 --resume >out.txt 2>err.txt ||
    fail "rank $rank $var=$n: --resume failed: $(cat err.txt)"
  [ "$(table_json r.h5)" = "$want" ] || fail "rank $rank $var=$n: the resumed table differs"
}

for r in 1 0; do
  for n in $(spread "${W[$r]}" "$samples"); do fault "$r" HEADFUSE_FAIL_H5_WRITE "$n"; done
  for n in $(spread "${A[$r]}" "$samples"); do fault "$r" HEADFUSE_FAIL_ALLOC "$n"; done
done
echo "ok: $tried faulted 2-rank runs, each a clear error from the failing rank, no hang; every --resume gave the uninterrupted table"
