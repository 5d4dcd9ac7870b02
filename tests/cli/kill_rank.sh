# One rank SIGKILLed while it is working on a unit (not the whole job): mpirun stops the
# job with a nonzero status naming the rank, the surviving ranks say (on mpirun's
# SIGTERM) that --resume goes on, no RESULT.h5 appears, every unit the killed
# rank had finished is still in its shard, and --resume (on a different number of ranks)
# gives the table of an uninterrupted run.
. "$HF_SOURCE_DIR/tests/lib.sh"

spec=(--family chain:d=2 --span 5 --no-prune)
mpi 2 search "${spec[@]}" --out ref.h5 --quiet
ref=$(table_json ref.h5)

# units_of SHARD_DIR RANK: finished units in that rank's shard (-1 if unreadable)
units_of() {
  $PY - "$1" "$2" <<'PY'
import glob, sys, h5py
files = glob.glob("%s/run-*-r%03d.h5" % (sys.argv[1], int(sys.argv[2])))
try:
    with h5py.File(files[0], "r", swmr=True) as h:  # shards are SWMR files
        print(h["units"].shape[0])
except Exception:
    print(-1)
PY
}

# pid_of_rank R: the headfuse process of MPI rank R of the k.h5 run
pid_of_rank() {
  local p
  for p in $(pgrep -f "^$HEADFUSE search .*k.h5" || true); do
    if grep -qx "OMPI_COMM_WORLD_RANK=$1" < <(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null); then
      echo "$p"
      return 0
    fi
  done
  return 1
}

timeout 600 mpirun --oversubscribe -n 3 "$HEADFUSE" search "${spec[@]}" --out k.h5 \
  >kout.txt 2>kerr.txt &
job=$!

# Wait until rank 1 has finished some units, then kill it while it is running (state R:
# computing, not waiting for its next unit; units here last about 10 ms).
killed=0
for _ in $(seq 600); do
  n=$(units_of k.h5.shards 1)
  if [ "$n" -ge 10 ]; then
    p=$(pid_of_rank 1) || fail "rank 1 is gone before the kill"
    if [ "$(awk '{print $3}' "/proc/$p/stat")" = R ]; then
      before=$(units_of k.h5.shards 1)
      kill -KILL "$p"
      killed=1
      break
    fi
  fi
  sleep 0.05
done
[ "$killed" = 1 ] || fail "never caught rank 1 computing"
set +e
wait "$job"
status=$?
set -e
[ "$status" != 0 ] || fail "mpirun exited 0 after a rank was killed"
grep -q "rank 1" kerr.txt || { cat kerr.txt >&2; fail "the error output does not name rank 1"; }
# the surviving ranks get SIGTERM from mpirun and say where the finished units are
grep -Eq "rank [02]: SIGTERM: stopping; .*--resume" kerr.txt ||
  { cat kerr.txt >&2; fail "no surviving rank said how to go on"; }
[ ! -e k.h5 ] || fail "a RESULT file appeared after a rank was killed"
after=$(units_of k.h5.shards 1)
[ "$after" -ge "$before" ] || fail "rank 1's shard lost units: $before before the kill, $after after"
for r in 0 2; do
  [ "$(units_of k.h5.shards $r)" -ge 0 ] || fail "rank $r's shard is unreadable"
done
echo "rank 1 killed with $before units saved ($after in its shard after the kill), mpirun status $status"

# Resume on 2 ranks: the same table as the uninterrupted run.
mpi 2 search "${spec[@]}" --out k.h5 --quiet --resume
[ "$(table_json k.h5)" = "$ref" ] || fail "resumed table differs from the uninterrupted run"
"$HEADFUSE" verify k.h5 >/dev/null || fail "verify rejected the resumed result"
echo "ok: one rank killed mid-unit, resumed on 2 ranks, table identical"
