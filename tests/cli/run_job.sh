# headfuse run: a job file gives one RESULT.h5 whose rows equal the same searches run one
# by one with `headfuse search`; bad job files exit 2 before any work (under mpirun too);
# SIGUSR1 stops with 75 and --resume finishes with the same table; leftover state is
# refused without --resume, and state of another job whenever saved work would be lost; --entry + --collect (the
# Slurm array path) gives the same table; HF_EXPECT_RANKS catches a wrong rank count.
. "$HF_SOURCE_DIR/tests/lib.sh"

cat >j.yaml <<'EOF'
name: j
entries:
  - {family: wd, d: 1..2, span: 1..2}
  - {family: multi, d: 2, k: 3, span: 2}
  - {target: data/two_heads_shared.json, span: 2, prune: false}
EOF

# --list: no MPI, the expanded entries in row order
run 0 "$HEADFUSE" run j.yaml --list
[ "$(sed -n 1p out.txt)" = "job j: 6 entries -> j.h5" ] || fail "list header: $(cat out.txt)"
[ "$(sed -n 2p out.txt)" = "$(printf '0\twd:d=1 span 1')" ] || fail "list: $(cat out.txt)"
[ "$(sed -n 7p out.txt)" = "$(printf '5\ttwo_heads_shared span 2 no-prune')" ] || fail "list: $(cat out.txt)"

# the job equals its entries searched one by one
run 0 mpi 2 run j.yaml --quiet
[ -f j.h5 ] && [ ! -e j.h5.shards ] || fail "no j.h5, or state left behind"
run 0 "$HEADFUSE" verify j.h5
specs=("--family wd:d=1 --span 1" "--family wd:d=1 --span 2" "--family wd:d=2 --span 1"
  "--family wd:d=2 --span 2" "--family multi:d=2,k=3 --span 2"
  "$SRC/data/two_heads_shared.json --span 2 --no-prune")
files=()
for i in "${!specs[@]}"; do
  # shellcheck disable=SC2086
  run 0 mpi 2 search ${specs[$i]} --out "s$i.h5" --quiet
  files+=("s$i.h5")
done
"$HEADFUSE" table "${files[@]}" --json --supports | python3 -c '
import json, sys
rows = json.load(sys.stdin)
for r in rows:
    r.pop("seconds", None); r.pop("file", None)
print(json.dumps(rows, sort_keys=True))' >sep.json
[ "$(table_json j.h5)" = "$(cat sep.json)" ] || fail "job rows differ from separate searches:
$(table_json j.h5)
$(cat sep.json)"
ref=$(table_json j.h5)
echo "ok: run = the entries searched one by one (6 rows, verified)"

# --resume after completion: nothing to do
run 0 mpi 2 run j.yaml --resume
grep -q "already complete" out.txt || fail "resume of a finished job: $(cat out.txt)"

# bad job files: exit 2 before any work, one message with file:line: key, rank 0 only
cat >bad.yaml <<'EOF'
output: bad.h5
entries:
  - {family: wd, d: 2, span: 1}
  - {family: wd, d: 2, span: 40}
EOF
run 2 mpi 2 run bad.yaml
[ "$(grep -c "^headfuse" err.txt)" = 1 ] || fail "expected one message (rank 0 only): $(cat err.txt)"
grep -q "^headfuse run: bad.yaml:4: entries\[1\].span: must be within 1..16" err.txt ||
  fail "message: $(cat err.txt)"
[ ! -e bad.h5 ] && [ ! -e bad.h5.shards ] || fail "work started for a bad job"
printf 'entries:\n  - {family: wd, d: 1, span: 1}\noutput: /no/such/dir/x.h5\n' >unwritable.yaml
run 2 mpi 2 run unwritable.yaml
grep -q "unwritable.yaml:3: output: cannot write '/no/such/dir/x.h5'" err.txt || fail "$(cat err.txt)"
run 2 mpi 1 run no-such-job.yaml
run 2 "$HEADFUSE" run j.yaml --entry 6
grep -q -- "--entry 6: the job has 6 entries" err.txt || fail "$(cat err.txt)"
echo "ok: bad job files and options exit 2 before any work"

# a wrong number of ranks (what a misconfigured srun would start) fails at once
HF_EXPECT_RANKS=3 run 7 mpi 2 run j.yaml --out wrong.h5
grep -q "HF_EXPECT_RANKS=3 but this MPI job has 2 rank" err.txt || fail "$(cat err.txt)"
[ ! -e wrong.h5.shards ] || fail "work started with the wrong rank count"
echo "ok: HF_EXPECT_RANKS mismatch -> exit 7"

# SIGUSR1 mid-run: 75 with a hint, state kept, --resume gives the same table
cat >slow.yaml <<'EOF'
name: slow
defaults: {prune: false}
entries:
  - {family: wd, d: 2, span: 1}
  - {family: chain, d: 2, span: 4}
  - {family: multi, d: 2, k: 3, span: 3}
EOF
run 0 mpi 2 run slow.yaml --out slow-ref.h5 --quiet
slow_ref=$(table_json slow-ref.h5)
set +e
timeout 600 mpirun --oversubscribe -n 2 "$HEADFUSE" run slow.yaml --quiet >out.txt 2>err.txt &
pid=$!
set -e
for _ in $(seq 600); do
  [ -f slow.h5.shards/entry-0.h5 ] && compgen -G "slow.h5.shards/entry-1/run-*" >/dev/null && break
  sleep 0.05
done
sleep 0.3
pkill -USR1 -f "^$HEADFUSE run slow.yaml" || true  # the ranks only, not timeout/mpirun
set +e
wait $pid
st=$?
set -e
[ "$st" = 75 ] || fail "SIGUSR1: status $st (expected 75): $(cat err.txt)"
grep -q -- "--resume" err.txt || fail "no resume hint: $(cat err.txt)"
[ ! -e slow.h5 ] && [ -f slow.h5.shards/entry-0.h5 ] || fail "state after the stop"
run 2 mpi 2 run slow.yaml --quiet
grep -q "rerun with --resume" err.txt || fail "leftover state accepted without --resume: $(cat err.txt)"
run 0 mpi 3 run slow.yaml --resume
grep -q "finished earlier" out.txt || fail "$(cat out.txt)"
[ "$(table_json slow.h5)" = "$slow_ref" ] || fail "resumed table differs:
$(table_json slow.h5)
$slow_ref"
echo "ok: SIGUSR1 -> 75, --resume on 3 ranks = uninterrupted"

# state of another job is refused even with --resume when it would drop saved work
# (tests/cli/run_extend.sh: an extended job keeps it); array tasks (--entry) never adapt
mkdir -p other.h5.shards
run 0 mpi 1 run j.yaml --entry 0 --out other.h5
printf 'entries:\n  - {family: chain, d: 2, span: 2}\n' >j2.yaml
run 2 mpi 1 run j2.yaml --out other.h5 --resume
grep -q "j2.yaml no longer has entry 'wd:d=1 span 1', whose work is saved in other.h5.shards" err.txt ||
  fail "$(cat err.txt)"
run 2 mpi 1 run j2.yaml --out other.h5 --resume --entry 0
grep -q "holds the state of another job" err.txt || fail "$(cat err.txt)"
echo "ok: another job's state is refused"

# the array path: each entry on its own (any order), then --collect
run 2 mpi 1 run j.yaml --collect --out arr.h5
grep -q -- "--collect: arr.h5.shards does not exist" err.txt || fail "$(cat err.txt)"
[ ! -e arr.h5.shards ] || fail "--collect created state"
for i in 5 2 0; do
  run 0 mpi 1 run j.yaml --entry "$i" --resume --out arr.h5 --quiet
done
run 2 mpi 1 run j.yaml --collect --out arr.h5
grep -q -- "--collect: 3 of 6 entries have no finished row in arr.h5.shards (entries 1, 3, 4)" err.txt ||
  fail "$(cat err.txt)"
for i in 1 4 3; do
  run 0 mpi 1 run j.yaml --entry "$i" --resume --out arr.h5 --quiet
  [ -f "arr.h5.shards/entry-$i.h5" ] || fail "entry $i: no row file"
done
run 0 "$HEADFUSE" verify arr.h5.shards/entry-5.h5
run 0 mpi 1 run j.yaml --collect --out arr.h5
[ "$(table_json arr.h5)" = "$ref" ] || fail "collected table differs"
[ ! -e arr.h5.shards ] || fail "state left after --collect"
echo "ok: --entry in any order + --collect = the whole run"
