# Stopping a run the documented way (issue 13, point 2; README "Stopping and resuming",
# docs/jobs.md, docs/cluster.md), on Open MPI's mpirun with 2 ranks:
#  - SIGUSR1 to mpirun: mpirun forwards it to every rank, the ranks save and stop, and
#    mpirun exits with 75 (search and run); --resume gives the uninterrupted table;
#  - SIGTERM to the headfuse processes (the ranks): 75 as well;
#  - SIGTERM to mpirun itself: the ranks stop cleanly and keep every finished unit, but
#    Open MPI 4.1's mpirun exits with 1, not 75 (it cannot forward SIGTERM: its
#    ess_base_forward_signals refuses it); --resume still gives the uninterrupted table.
. "$HF_SOURCE_DIR/tests/lib.sh"

spec=(--family chain:d=2 --span 5 --no-prune --quiet)
run 0 mpi 2 search --family chain:d=2 --span 5 --no-prune --quiet --out ref.h5
ref=$(table_json ref.h5)

# start OUT: the search under mpirun in the background ($job is mpirun's pid), until its
# shards hold a finished unit
start() {
  rm -rf "$1" "$1.shards"
  mpirun --oversubscribe -n 2 "$HEADFUSE" search "${spec[@]}" --out "$1" >out.txt 2>err.txt &
  job=$!
  for _ in $(seq 600); do
    compgen -G "$1.shards/run-*.h5" >/dev/null && break
    sleep 0.05
  done
  sleep 1
}

# finish WANT OUT: mpirun's status is WANT, nothing was written, --resume gives the table
finish() {
  set +e
  wait "$job"
  local st=$?
  set -e
  [ "$st" = "$1" ] || fail "mpirun exit status $st, expected $1: $(cat err.txt)"
  [ ! -e "$2" ] || fail "a result was written although the run was stopped"
  grep -q -- "--resume" err.txt || fail "no resume hint: $(cat err.txt)"
  cp err.txt stop-err.txt
  run 0 mpi 2 search "${spec[@]}" --out "$2" --resume
  [ "$(table_json "$2")" = "$ref" ] || fail "resumed table differs from the uninterrupted run"
}

# 1. the documented way: SIGUSR1 to mpirun
start u.h5
kill -USR1 "$job"
finish 75 u.h5
grep -q "interrupted at size .* rerun the same command with --resume" stop-err.txt ||
  fail "SIGUSR1: $(cat stop-err.txt)"
echo "ok: kill -USR1 <mpirun pid> -> mpirun exits 75; --resume = uninterrupted"

# 2. SIGTERM to the ranks themselves
start r.h5
pkill -TERM -f "^$HEADFUSE search .*--out r.h5" || fail "no rank to signal"
finish 75 r.h5
echo "ok: kill -TERM <rank pids> -> mpirun exits 75; --resume = uninterrupted"

# 3. SIGTERM to mpirun: clean stop, nothing lost, but status 1 with Open MPI 4.1
start t.h5
kill -TERM "$job"
set +e
wait "$job"
st=$?
set -e
grep -q "SIGTERM: stopping; finished units are saved" err.txt || fail "SIGTERM: ranks silent: $(cat err.txt)"
case $(mpirun --version | head -1) in
  *"Open MPI) 4.1."*) [ "$st" = 1 ] || fail "kill -TERM <mpirun pid>: status $st; docs say Open MPI 4.1 gives 1" ;;
  *) [ "$st" != 0 ] || fail "kill -TERM <mpirun pid>: status 0" ;;
esac
[ ! -e t.h5 ] || fail "SIGTERM: a result was written"
run 0 mpi 2 search "${spec[@]}" --out t.h5 --resume
[ "$(table_json t.h5)" = "$ref" ] || fail "SIGTERM to mpirun + resume differs"
echo "ok: kill -TERM <mpirun pid> -> ranks stop cleanly, mpirun exits $st ($(mpirun --version | head -1)); --resume = uninterrupted"

# 4. headfuse run: SIGUSR1 to mpirun between or inside entries gives 75 too
cat >j.yaml <<'EOF'
name: j
defaults: {prune: false}
entries:
  - {family: wd, d: 2, span: 1}
  - {family: chain, d: 2, span: 5}
EOF
mpirun --oversubscribe -n 2 "$HEADFUSE" run j.yaml --quiet >out.txt 2>err.txt &
job=$!
for _ in $(seq 600); do
  compgen -G "j.h5.shards/entry-1/run-*.h5" >/dev/null && break
  sleep 0.05
done
sleep 1
kill -USR1 "$job"
set +e
wait "$job"
st=$?
set -e
[ "$st" = 75 ] || fail "run: kill -USR1 <mpirun pid>: status $st: $(cat err.txt)"
grep -q "rerun the same command with --resume" err.txt || fail "run: no hint: $(cat err.txt)"
[ -f j.h5.shards/entry-0.h5 ] && [ ! -e j.h5 ] || fail "run: state after the stop"
run 0 mpi 2 run j.yaml --quiet --resume
grep -q "finished earlier" out.txt || true
[ "$("$HEADFUSE" table j.h5 --json | $PY -c 'import json,sys; print([r["m_star"] for r in json.load(sys.stdin)])')" = "[4, 7]" ] ||
  fail "run: resumed table"
echo "ok: headfuse run: kill -USR1 <mpirun pid> -> 75, --resume finishes"
