# Extending a campaign (issue 13, point 3): after entries are added to a job file,
# `headfuse run --resume` keeps every finished entry whose definition is unchanged (and
# the finished units of the one in flight), moves their state to the entries' new
# indices, and runs only the new entries; the table equals a fresh run of the extended
# job. An entry whose definition changed, or that was removed, is refused with its name
# while it has saved work; so is a row of an existing RESULT.h5 that is no longer in the
# job (unless --force). A state move cut at any point (HEADFUSE_FAIL_STATE_MOVE=N) is
# finished by the next --resume.
. "$HF_SOURCE_DIR/tests/lib.sh"

# stop_when COND: once COND holds, a moment later SIGUSR1 to mpirun ($job, mpi_bg), which
# forwards it to the ranks: the run must end with status 75
stop_when() {
  wait_until "$1"
  sleep 0.3
  signal_job USR1 75
}

# units_in DIR: finished units in the shards of DIR
units_in() {
  $PY - "$1" <<'PY'
import glob, sys, h5py
n = 0
for f in glob.glob(sys.argv[1] + "/run-*.h5"):
    try:
        with h5py.File(f, "r", swmr=True) as h:
            n += h["units"].shape[0]
    except Exception:
        pass
print(n)
PY
}

# ---- 1. a real 2-rank run stopped in entry 3, the job extended (a new entry first and
# one last), resumed: the state moved, only new entries run, the table of a fresh run.
# Entry 3 (chain:d=2 span 5, plain) takes about 12 s here: wide margins for the stops.
cat >v1.yaml <<'EOF'
name: ext
defaults: {prune: false}
entries:
  - {family: wd, d: 2, span: 1}
  - {family: chain, d: 2, span: 2..3}
  - {family: chain, d: 2, span: 5}
EOF
cat >v2.yaml <<'EOF'
name: ext
defaults: {prune: false}
entries:
  - {family: wd, d: 1, span: 1}
  - {family: wd, d: 2, span: 1}
  - {family: chain, d: 2, span: 2..3}
  - {family: chain, d: 2, span: 5}
  - {family: wd, d: 3, span: 1}
EOF
cp v1.yaml ext.yaml
mpi_bg 2 run ext.yaml --quiet
stop_when '[ -f ext.h5.shards/entry-2.h5 ] && [ "$(units_in ext.h5.shards/entry-3)" -ge 1 ]'
ls ext.h5.shards/entry-3 >inflight.txt
[ -s inflight.txt ] && [ ! -e ext.h5.shards/entry-3.h5 ] || fail "entry 3 should be in flight"
[ "$(units_in ext.h5.shards/entry-3)" -gt 0 ] || fail "entry 3 has no finished unit to keep"

cp v2.yaml ext.yaml
run 0 "$HEADFUSE" run ext.yaml --list
[ "$(sed -n 1p out.txt)" = "job ext: 6 entries -> ext.h5" ] || fail "v2 list: $(cat out.txt)"
# the extended job, resumed and stopped again once it is back in the old entry 3 (now
# 4): the state has moved (rows 0-2 to 1-3, entry 3's shards to entry 4, file by file),
# the new entry 0 ran, and nothing is lost
mpi_bg 2 run ext.yaml --quiet --resume
stop_when '[ -f ext.h5.shards/entry-0.h5 ] && [ "$(ls ext.h5.shards/entry-4 | wc -l)" -gt "$(wc -l <inflight.txt)" ]'
for i in 1 2 3; do
  [ -f "ext.h5.shards/entry-$i.h5" ] || fail "finished row of old entry $((i - 1)) not moved to entry $i"
done
[ ! -e ext.h5.shards/entry-4.h5 ] && [ ! -e ext.h5.shards/entry-5.h5 ] || fail "entries 4 and 5 should not be finished"
while read -r f; do
  [ -f "ext.h5.shards/entry-4/$f" ] || fail "entry 3's shard $f did not move to entry 4: $(ls ext.h5.shards/entry-4)"
done <inflight.txt
[ ! -e ext.h5.shards/migrate.txt ] && ! compgen -G "ext.h5.shards/moving-*" >/dev/null ||
  fail "a migration was left unfinished"
run 0 "$HEADFUSE" run ext.yaml --list --json
run 0 mpi 2 run ext.yaml --resume
grep -q "ext.h5: 6 rows (2 run now, 4 finished earlier)" out.txt || fail "resume: $(cat out.txt)"
run 0 mpi 2 run v2.yaml --out fresh.h5 --quiet
[ "$(table_json ext.h5)" = "$(table_json fresh.h5)" ] || fail "extended + resumed differs from a fresh run:
$(table_json ext.h5)
$(table_json fresh.h5)"
run 0 "$HEADFUSE" verify ext.h5
echo "ok: 2 ranks stopped (SIGUSR1 to mpirun), job extended, resumed: 3 entries and the units of the one in flight kept, table = fresh run"

# ---- 2. a changed or removed entry with saved work is refused by name
cp "$SRC/data/two_heads_shared.json" t.json
cat >r.yaml <<'EOF'
name: r
entries:
  - {family: wd, d: 1..2, span: 1}
  - {family: chain, d: 2, span: 2}
  - {target: t.json, span: 1}
EOF
for i in 0 2 3; do run 0 mpi 1 run r.yaml --entry "$i" --resume --quiet; done
state_sum() { (cd r.h5.shards && find . -type f | sort | xargs md5sum) | md5sum; }
before=$(state_sum)
sed 's/span: 2}/span: 2, max_atoms: 9}/' r.yaml >r-changed.yaml
run 2 mpi 1 run r-changed.yaml --out r.h5 --resume
grep -q "r-changed.yaml changed entry 'chain:d=2 span 2' since its work was saved in r.h5.shards: it is now entry 2 'chain:d=2 span 2 max_atoms 9'; restore it, or remove r.h5.shards/entry-2.h5 and r.h5.shards/entry-2" err.txt ||
  fail "changed entry: $(cat err.txt)"
grep -v '{family: chain' r.yaml >r-removed.yaml
run 2 mpi 1 run r-removed.yaml --out r.h5 --resume
grep -q "r-removed.yaml no longer has entry 'chain:d=2 span 2', whose work is saved in r.h5.shards" err.txt ||
  fail "removed entry: $(cat err.txt)"
sed -i 's/"weight": "2"/"weight": "3"/' t.json
run 2 mpi 1 run r.yaml --resume
grep -q "changed entry 'two_heads_shared span 1' .* it is now entry 3 'two_heads_shared span 1' (its target file changed)" err.txt ||
  fail "changed target file: $(cat err.txt)"
cp "$SRC/data/two_heads_shared.json" t.json
sed 's/d: 1..2/d: 1..3/' r.yaml >r-more.yaml
run 2 mpi 1 run r-more.yaml --out r.h5 --entry 1 --resume
grep -q "holds the state of another job .* run the whole job once with --resume to carry its finished entries over (not --entry)" err.txt ||
  fail "--entry on a changed job: $(cat err.txt)"
[ "$(state_sum)" = "$before" ] || fail "a refused run changed the state"
run 0 mpi 1 run r-more.yaml --out r.h5 --resume --quiet
grep -q "r.h5: 5 rows (2 run now, 3 finished earlier)" out.txt || fail "r-more: $(cat out.txt)"
echo "ok: changed entry, removed entry, changed target file and --entry on a changed job refused by name; state untouched"

# ---- 3. the job extended after its RESULT.h5 was written: the rows are kept
printf 'name: c\nentries:\n  - {family: wd, d: 1..2, span: 1}\n' >c.yaml
run 0 mpi 2 run c.yaml --quiet
before=$(md5sum c.h5)
sed -i 's/span: 1}/span: 1..2}/' c.yaml
run 0 mpi 2 run c.yaml --resume --quiet
grep -q "c.h5: 4 rows (2 run now, 2 finished earlier)" out.txt || fail "extended after the result: $(cat out.txt)"
run 0 mpi 2 run c.yaml --out c-fresh.h5 --quiet
[ "$(table_json c.h5)" = "$(table_json c-fresh.h5)" ] || fail "extended result differs from a fresh run"
printf 'name: c\nentries:\n  - {family: wd, d: 2, span: 1..2}\n' >c.yaml
before=$(md5sum c.h5)
run 2 mpi 2 run c.yaml --resume --quiet
grep -q "c.h5: row 0 (wd:d=1 span 1, engine cone, max_atoms 0) is not an entry of c.yaml; --resume would drop it: put its entry back, or give --force to overwrite c.h5" err.txt ||
  fail "a row no longer in the job: $(cat err.txt)"
[ "$(md5sum c.h5)" = "$before" ] && [ ! -e c.h5.shards ] || fail "a refused run touched c.h5 or made state"
run 0 mpi 2 run c.yaml --resume --force --quiet
grep -q "c.h5: 2 rows (0 run now, 2 finished earlier)" out.txt || fail "--resume --force: $(cat out.txt)"
echo "ok: rows of an existing RESULT.h5 kept for an extended job; a dropped row refused unless --force"

# ---- 4. a state move cut at every point is finished by the next --resume
printf 'name: m\nentries:\n  - {family: wd, d: 1..3, span: 1}\n' >m.yaml
for i in 0 1 2; do run 0 mpi 1 run m.yaml --entry "$i" --resume --quiet; done
cp -a m.h5.shards saved.shards
printf 'name: m\nentries:\n  - {family: wd, d: 4, span: 1}\n  - {family: wd, d: 1..3, span: 1}\n' >m.yaml
run 0 mpi 1 run m.yaml --out m-fresh.h5 --quiet
want=$(table_json m-fresh.h5)
cut=0
for n in $(seq 1 12); do
  rm -rf m.h5 m.h5.shards
  cp -a saved.shards m.h5.shards
  set +e
  HEADFUSE_FAIL_STATE_MOVE=$n mpi 1 run m.yaml --resume --quiet >out.txt 2>err.txt
  st=$?
  set -e
  if [ "$st" = 0 ]; then
    break
  fi
  [ "$st" = 4 ] || fail "move $n: status $st: $(cat err.txt)"
  grep -q "cannot move to .*: Input/output error" err.txt || fail "move $n: $(cat err.txt)"
  [ -e m.h5.shards/migrate.txt ] || fail "move $n: no journal left behind"
  cut=$n
  run 0 mpi 1 run m.yaml --resume --quiet
  grep -q "m.h5: 4 rows (1 run now, 3 finished earlier)" out.txt || fail "after move $n: $(cat out.txt)"
  [ "$(table_json m.h5)" = "$want" ] || fail "after move $n: the table differs"
done
[ "$cut" = 7 ] || fail "expected 7 moves (3 rows out, 3 in, job.txt), cut $cut"
[ "$(table_json m.h5)" = "$want" ] || fail "uncut migration: the table differs"
echo "ok: a state move cut at each of its $cut renames is finished by the next --resume"
