# Faults and signals: SIGKILL of the whole job at a random moment, then --resume, gives
# the table of an uninterrupted run (nothing lost, nothing counted twice); SIGUSR1 and
# SIGTERM stop the ranks with status 75 and a resume hint; no half-written RESULT.h5.
. "$HF_SOURCE_DIR/tests/lib.sh"

spec=(--family wd:d=3 --span 2 --no-prune)
mpi 2 search "${spec[@]}" --out ref.h5 --quiet
ref=$(table_json ref.h5)

# wait_units FILE N: until the shards of FILE hold at least N finished units (or 60 s)
wait_units() {
  for _ in $(seq 600); do
    c=$($PY - "$1.shards" <<'PY' 2>/dev/null || echo 0
import glob, sys, h5py
n = 0
for f in glob.glob(sys.argv[1] + "/run-*.h5"):
    try:
        with h5py.File(f, "r", swmr=True) as h:  # shards are SWMR files
            n += h["units"].shape[0]
    except Exception:
        pass
print(n)
PY
)
    [ "$c" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "no progress in $1"
}

# 1. SIGKILL everything mid-run, twice, then resume to the end
rm -rf resume-kill.h5 resume-kill.h5.shards
timeout 600 mpirun --oversubscribe -n 2 "$HEADFUSE" search "${spec[@]}" --out resume-kill.h5 --quiet &
wait_units resume-kill.h5 3
pkill -KILL -f "headfuse search.*resume-kill.h5" || true
wait || true
[ ! -e resume-kill.h5 ] || fail "a RESULT file appeared after SIGKILL"
timeout 600 mpirun --oversubscribe -n 2 "$HEADFUSE" search "${spec[@]}" --out resume-kill.h5 --quiet --resume &
wait_units resume-kill.h5 8
pkill -KILL -f "headfuse search.*resume-kill.h5" || true
wait || true
run 0 mpi 3 search "${spec[@]}" --out resume-kill.h5 --quiet --resume
[ "$(table_json resume-kill.h5)" = "$ref" ] || fail "kill+resume differs:
$(table_json resume-kill.h5)
$ref"
echo "ok: SIGKILL twice + resume (3 ranks) equals the uninterrupted run"

# (the file names are this test's own: pkill matches command lines, and ctest -j 2 runs
# other tests' searches beside this one)
# 2. SIGUSR1 / SIGTERM to the ranks: status 75, a resume hint, then resume
for sig in USR1 TERM; do
  rm -rf resume-signal.h5 resume-signal.h5.shards
  set +e
  timeout 600 mpirun --oversubscribe -n 2 "$HEADFUSE" search "${spec[@]}" --out resume-signal.h5 --quiet 2>err.txt &
  pid=$!
  set -e
  wait_units resume-signal.h5 3
  pkill -"$sig" -f "^$HEADFUSE search .*resume-signal.h5" || true
  set +e
  wait $pid
  st=$?
  set -e
  [ "$st" = 75 ] || fail "SIG$sig: exit status $st, expected 75: $(cat err.txt)"
  grep -q -- "--resume" err.txt || fail "SIG$sig: no resume hint: $(cat err.txt)"
  [ ! -e resume-signal.h5 ] || fail "SIG$sig: RESULT written although interrupted"
  # the stopped run as if it had lasted 30 s (its shards' last write, from the stamp in
  # their names): the resumed row's seconds count it (README, "seconds")
  $PY - resume-signal.h5.shards <<'PY'
import glob, os, re, sys
for f in glob.glob(sys.argv[1] + "/run-*.h5"):
    stamp = int(re.match(r"run-(\d+)-", os.path.basename(f)).group(1))
    os.utime(f, (stamp + 30, stamp + 30))
PY
  run 0 mpi 2 search "${spec[@]}" --out resume-signal.h5 --quiet --resume
  [ "$(table_json resume-signal.h5)" = "$ref" ] || fail "SIG$sig + resume differs"
  secs=$("$HEADFUSE" table resume-signal.h5 --json | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["seconds"])')
  $PY -c "import sys; sys.exit(not 30 <= $secs < 120)" || fail "SIG$sig: resumed row's seconds $secs, not the 30 s of the stopped run and its own"
  echo "ok: SIG$sig -> status 75, resume equals the uninterrupted run"
done

# 3. without --resume, leftover shards are refused (never mixed silently)
rm -rf resume-x.h5 resume-x.h5.shards
timeout 600 mpirun --oversubscribe -n 2 "$HEADFUSE" search "${spec[@]}" --out resume-x.h5 --quiet &
wait_units resume-x.h5 2
pkill -KILL -f "headfuse search.*resume-x.h5" || true
wait || true
run 2 mpi 2 search "${spec[@]}" --out resume-x.h5 --quiet
grep -q -- "--resume" err.txt || fail "leftover shards: no hint"
