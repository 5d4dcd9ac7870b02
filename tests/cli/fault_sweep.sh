# Fault injection at command level (docs/reliability.md, "Fault injection"): a small
# 1-rank search is run once to count its store write calls (W) and allocations (A),
# then once per fault: the Nth write call failing for EVERY N in 1..W, the Nth
# allocation failing for HF_SWEEP_ALLOC_SAMPLES (default 40) N spread evenly over 1..A
# (0 = every N; HF_SWEEP_H5_SAMPLES likewise for the write calls, default 0, as
# scripts/test-sanitize uses to keep its run short). Each faulted run must exit nonzero without a crash (status < 128) with
# one error line (naming the file for write faults), leave no RESULT.h5.tmp and no
# RESULT.h5 that `headfuse verify` refuses; `--resume` without faults must then give
# the table of an uninterrupted run.
. "$HF_SOURCE_DIR/tests/lib.sh"

# Singletons without an orted or shared-memory transport: 0.2 s a run instead of 0.6 s.
export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self OMPI_MCA_pml=ob1
alloc_samples=${HF_SWEEP_ALLOC_SAMPLES:-40}
h5_samples=${HF_SWEEP_H5_SAMPLES:-0}
spec=(search --family wd:d=2 --span 2 --quiet)

HEADFUSE_FAULT_COUNT=1 "$HEADFUSE" "${spec[@]}" --out ref.h5 >out.txt 2>err.txt ||
  fail "the run without faults failed: $(cat err.txt)"
counts=$(grep 'fault points:' err.txt) || fail "HEADFUSE_FAULT_COUNT printed nothing"
W=$(sed -n 's/.*h5_write=\([0-9]*\).*/\1/p' <<<"$counts")
A=$(sed -n 's/.*alloc=\([0-9]*\).*/\1/p' <<<"$counts")
[ "$W" -gt 50 ] && [ "$A" -gt 100 ] || fail "implausible counts: $counts"
want=$(table_json ref.h5)
echo "counts: $W store write calls, $A allocations"

# A malformed value is refused before anything runs.
HEADFUSE_FAIL_H5_WRITE=x run 2 "$HEADFUSE" "${spec[@]}" --out bad.h5
grep -q 'HEADFUSE_FAIL_H5_WRITE=x' err.txt || fail "malformed value not named: $(cat err.txt)"

declare -A codes
results=0 verified=0 tried=0

# fault VAR N: one faulted run, its checks, and the resume.
fault() {
  local var=$1 n=$2 rc lines
  rm -rf r.h5 r.h5.tmp r.h5.shards
  set +e
  env "$var=$n" timeout 120 "$HEADFUSE" "${spec[@]}" --out r.h5 >out.txt 2>err.txt
  rc=$?
  set -e
  tried=$((tried + 1))
  codes[$rc]=$((${codes[$rc]:-0} + 1))
  if [ "$rc" = 0 ] || [ "$rc" -ge 128 ]; then
    cat err.txt >&2
    fail "$var=$n: exit status $rc, expected an error status below 128"
  fi
  lines=$(wc -l <err.txt)
  [ "$lines" = 1 ] || { cat err.txt >&2; fail "$var=$n: $lines lines on stderr, expected one"; }
  grep -q '^headfuse search: ' err.txt || fail "$var=$n: not an error line: $(cat err.txt)"
  if [ "$var" = HEADFUSE_FAIL_H5_WRITE ]; then
    grep -q 'r\.h5' err.txt || fail "$var=$n: the message names no file: $(cat err.txt)"
  else
    grep -q 'out of memory' err.txt || fail "$var=$n: not an out-of-memory error: $(cat err.txt)"
  fi
  [ ! -e r.h5.tmp ] || fail "$var=$n: r.h5.tmp left behind"
  if [ -e r.h5 ]; then
    results=$((results + 1))
    "$HEADFUSE" verify r.h5 >/dev/null 2>&1 || fail "$var=$n: a RESULT that verify refuses"
    verified=$((verified + 1))
  fi
  "$HEADFUSE" "${spec[@]}" --out r.h5 --resume >out.txt 2>err.txt ||
    fail "$var=$n: --resume failed: $(cat err.txt)"
  [ "$(table_json r.h5)" = "$want" ] || fail "$var=$n: the resumed table differs"
}

summary() {
  local s="" k
  for k in $(printf '%s\n' "${!codes[@]}" | sort -n); do s="$s $k:${codes[$k]}"; done
  echo "ok: $1: $tried runs, exit status:count$s; results left $results, verified $verified;" \
    "every --resume gave the uninterrupted table"
  codes=() results=0 verified=0 tried=0
}

# spread COUNT SAMPLES: every N in 1..COUNT (SAMPLES 0 or >= COUNT), else SAMPLES of
# them evenly spread, first and last included.
spread() {
  if [ "$2" = 0 ] || [ "$2" -ge "$1" ]; then
    seq 1 "$1"
  else
    for i in $(seq 0 $(($2 - 1))); do echo $((1 + i * ($1 - 1) / ($2 - 1))); done
  fi
}

t0=$SECONDS
ns=$(spread "$W" "$h5_samples")
for n in $ns; do fault HEADFUSE_FAIL_H5_WRITE "$n"; done
summary "write calls, $(wc -w <<<"$ns") N of 1..$W ($((SECONDS - t0)) s)"

t0=$SECONDS
ns=$(spread "$A" "$alloc_samples")
for n in $ns; do fault HEADFUSE_FAIL_ALLOC "$n"; done
summary "allocations, $(wc -w <<<"$ns") N of 1..$A ($((SECONDS - t0)) s)"
