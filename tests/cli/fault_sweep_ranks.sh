# Faults on ONE rank of a 2-rank search, then of a 2-rank job (`headfuse run`)
# (HEADFUSE_FAULT_RANK, docs/reliability.md): a store write call or an allocation
# failing on rank 1 only, then on rank 0 only. No
# rank may be left waiting for the other (a hang fails the test after 60 s); the job
# exits nonzero without a crash, exactly one "headfuse CMD:" line carries the
# failing rank's own message (naming the rank when it is not 0, and the shard file for
# a write fault), no RESULT.h5 or .tmp is left, and `--resume` gives the table of an
# uninterrupted run. HF_SWEEP_RANK_SAMPLES (default 10; HF_SWEEP_RUN_SAMPLES, default
# 4, for the job) N per rank and kind, spread over the rank's own count of fault points.
. "$HF_SOURCE_DIR/tests/lib.sh"

samples=${HF_SWEEP_RANK_SAMPLES:-10}
run_samples=${HF_SWEEP_RUN_SAMPLES:-4}
search=(search --family wd:d=2 --span 2 --quiet --out r.h5)
printf 'name: jr\nentries:\n  - {family: wd, d: 1..2, span: 2}\noutput: r.h5\n' >j.yaml
job=(run j.yaml --quiet)

spread() {
  if [ "$2" -ge "$1" ]; then
    seq 1 "$1"
  else
    for i in $(seq 0 $(($2 - 1))); do echo $((1 + i * ($1 - 1) / ($2 - 1))); done
  fi
}

tried=0 unreached=0
# sweep SAMPLES CMD ARGS...: count the fault points of each rank, then the faulted runs
sweep() {
  local nsamples=$1 cmd=$2
  [ "$nsamples" -gt 0 ] || return 0 # 0: skip this command
  shift
  local args=("$@")
  rm -rf r.h5 r.h5.*
  HEADFUSE_FAULT_COUNT=1 mpi 2 "${args[@]}" >out.txt 2>err.txt ||
    fail "$cmd without faults failed: $(cat err.txt)"
  want=$(table_json r.h5)
  declare -A W A
  local r n
  for r in 0 1; do
    W[$r]=$(sed -n "s/.*h5_write=\([0-9]*\).*rank $r).*/\1/p" err.txt | head -1)
    A[$r]=$(sed -n "s/.*alloc=\([0-9]*\).*rank $r).*/\1/p" err.txt | head -1)
    [ "${W[$r]:-0}" -gt 0 ] && [ "${A[$r]:-0}" -gt 0 ] || fail "$cmd: no counts for rank $r: $(cat err.txt)"
  done
  echo "$cmd: rank 0: ${W[0]} write calls, ${A[0]} allocations; rank 1: ${W[1]} write calls, ${A[1]} allocations"
  for r in 1 0; do
    for n in $(spread "${W[$r]}" "$nsamples"); do fault "$r" HEADFUSE_FAIL_H5_WRITE "$n"; done
    for n in $(spread "${A[$r]}" "$nsamples"); do fault "$r" HEADFUSE_FAIL_ALLOC "$n"; done
  done
}

# fault RANK VAR N (uses cmd, args and want of sweep)
fault() {
  local rank=$1 var=$2 n=$3 rc lines what="$cmd: rank $1 $2=$3"
  rm -rf r.h5 r.h5.*
  set +e
  env HEADFUSE_FAULT_RANK="$rank" "$var=$n" HEADFUSE_FAULT_COUNT=1 timeout 60 \
    mpirun --oversubscribe -n 2 "$HEADFUSE" "${args[@]}" >out.txt 2>err.txt
  rc=$?
  set -e
  tried=$((tried + 1))
  [ "$rc" != 124 ] || fail "$what: the job hung (killed after 60 s)"
  if [ "$rc" = 0 ]; then
    # Units go to whichever rank asks first, so a rank's count of fault points varies
    # from run to run: a fault beyond this run's count was never reached.
    local key=h5_write made
    [ "$var" = HEADFUSE_FAIL_H5_WRITE ] || key=alloc
    made=$(sed -n "s/.*$key=\([0-9]*\).*rank $rank).*/\1/p" err.txt | head -1)
    [ -n "$made" ] && [ "$made" -lt "$n" ] ||
      { cat err.txt >&2; fail "$what: exit status 0 although the fault was reached ($made points)"; }
    "$HEADFUSE" verify r.h5 >/dev/null 2>&1 || fail "$what: a RESULT that verify refuses"
    [ "$(table_json r.h5)" = "$want" ] || fail "$what: the table differs"
    unreached=$((unreached + 1))
    return 0
  fi
  if [ "$rc" -ge 128 ]; then
    cat err.txt >&2
    fail "$what: exit status $rc, expected an error status below 128"
  fi
  lines=$(grep -c "^headfuse $cmd: " err.txt || true)
  [ "$lines" = 1 ] || { cat err.txt >&2; fail "$what: $lines error lines, expected one"; }
  if [ "$rank" = 1 ]; then
    grep -q "^headfuse $cmd: rank 1: " err.txt ||
      fail "$what: the message does not come from rank 1: $(cat err.txt)"
  fi
  if [ "$var" = HEADFUSE_FAIL_H5_WRITE ]; then
    grep -q 'r\.h5' err.txt || fail "$what: the message names no file: $(cat err.txt)"
  else
    grep -q 'out of memory' err.txt || fail "$what: not out of memory: $(cat err.txt)"
  fi
  [ ! -e r.h5.tmp ] || fail "$what: r.h5.tmp left behind"
  [ ! -e r.h5 ] || "$HEADFUSE" verify r.h5 >/dev/null 2>&1 || fail "$what: a RESULT that verify refuses"
  mpi 2 "${args[@]}" --resume >out.txt 2>err.txt || fail "$what: --resume failed: $(cat err.txt)"
  [ "$(table_json r.h5)" = "$want" ] || fail "$what: the resumed table differs"
}

sweep "$samples" "${search[@]}"
sweep "$run_samples" "${job[@]}"
echo "ok: $tried faulted 2-rank runs ($unreached whose fault lay beyond that run's count and" \
  "that finished correctly), each other a clear error from the failing rank, no hang; every" \
  "--resume gave the uninterrupted table"
