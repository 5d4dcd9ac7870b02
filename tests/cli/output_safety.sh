# An existing output is never overwritten silently (issue 13, points 1 and 9):
# `search --out`, `run` and `approx --out` refuse an existing file with exit 2 and a
# message that names --force (and --resume where it applies), and leave the file as it
# was; --force overwrites; `search --resume` on its own finished result does nothing;
# a missing output directory is refused (exit 2, one message) before any work.
. "$HF_SOURCE_DIR/tests/lib.sh"

sum() { md5sum "$1" | cut -d' ' -f1; }

# a JSON target given as --out by mistake
cp "$SRC/data/two_heads_shared.json" t.json
before=$(sum t.json)
run 2 mpi 2 search --family wd:d=2 --span 1 --out t.json --quiet
[ "$(grep -c "^headfuse search" err.txt)" = 1 ] || fail "expected one message: $(cat err.txt)"
grep -q "^headfuse search: --out t.json: exists; give --force to overwrite it, or --resume to keep it" err.txt ||
  fail "search over a JSON file: $(cat err.txt)"
[ "$(sum t.json)" = "$before" ] && [ ! -e t.json.shards ] || fail "t.json was touched"
run 2 mpi 1 search --family wd:d=2 --span 1 --out t.json --quiet --resume
grep -q "t.json: exists and is not a readable result" err.txt || fail "--resume over JSON: $(cat err.txt)"
[ "$(sum t.json)" = "$before" ] || fail "t.json was touched by --resume"
echo "ok: search refuses to overwrite a JSON target"

# a finished result: refused, kept by --resume (nothing to do), replaced by --force
run 0 mpi 2 search --family chain:d=2 --span 2 --out r.h5 --quiet
before=$(sum r.h5)
run 2 mpi 2 search --family chain:d=2 --span 2 --out r.h5 --quiet
grep -q -- "--force" err.txt && grep -q -- "--resume" err.txt || fail "message lacks an option: $(cat err.txt)"
run 0 mpi 2 search --family chain:d=2 --span 2 --out r.h5 --quiet --resume
grep -q "r.h5: already complete; nothing to do" out.txt || fail "--resume on a finished search: $(cat out.txt)"
[ "$(sum r.h5)" = "$before" ] || fail "--resume rewrote a finished result"
run 2 mpi 2 search --family chain:d=2 --span 3 --out r.h5 --quiet --resume
grep -q "r.h5: exists and holds another result (1 row: chain:d=2, other settings), not this search's; give --force" err.txt ||
  fail "--resume with other settings: $(cat err.txt)"
run 2 mpi 2 search --family wd:d=2 --span 2 --out r.h5 --quiet --resume
grep -q "holds another result (1 row: chain:d=2)" err.txt || fail "--resume, another target: $(cat err.txt)"
[ "$(sum r.h5)" = "$before" ] || fail "a refused run changed r.h5"
run 0 mpi 2 search --family chain:d=2 --span 3 --out r.h5 --quiet --force
[ "$("$HEADFUSE" table r.h5 --json | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["span"])')" = 3 ] ||
  fail "--force did not overwrite"
echo "ok: search keeps a finished result unless --force; --resume leaves its own result as it is"

# a missing output directory: exit 2 with the directory named, before any shard
run 2 mpi 2 search --family wd:d=2 --span 1 --out /no/such/dir/r.h5 --quiet
[ "$(grep -c "^headfuse search" err.txt)" = 1 ] || fail "expected one message: $(cat err.txt)"
grep -q "^headfuse search: --out /no/such/dir/r.h5: cannot write '/no/such/dir/r.h5': directory /no/such/dir: No such file or directory" err.txt ||
  fail "search into a missing directory: $(cat err.txt)"
run 2 mpi 2 approx --family wd:d=1 --atoms 1 --samples 10 --restarts 1 --out /no/such/dir/a.h5 --quiet
grep -q "^headfuse approx: --out /no/such/dir/a.h5: cannot write '/no/such/dir/a.h5': directory /no/such/dir" err.txt ||
  fail "approx into a missing directory: $(cat err.txt)"
mkdir adir
run 2 mpi 1 search --family wd:d=2 --span 1 --out adir --quiet
grep -q "'adir' is a directory; name a file" err.txt || fail "search --out DIR: $(cat err.txt)"
echo "ok: search and approx check the output directory first (exit 2)"

# approx: refused, then --force
run 0 mpi 2 approx --family wd:d=1 --atoms 1..2 --samples 30 --restarts 1 --out a.h5 --quiet
before=$(sum a.h5)
run 2 mpi 2 approx --family wd:d=1 --atoms 1..2 --samples 30 --restarts 1 --out a.h5 --quiet
grep -q "^headfuse approx: --out a.h5: exists; give --force to overwrite it$" err.txt || fail "approx: $(cat err.txt)"
[ "$(sum a.h5)" = "$before" ] || fail "a refused approx changed a.h5"
run 0 mpi 2 approx --family wd:d=1 --atoms 1..2 --samples 30 --restarts 1 --out a.h5 --quiet --force
echo "ok: approx keeps an existing file unless --force"

# run: the job's output exists
printf 'name: j\nentries:\n  - {family: wd, d: 1..2, span: 1}\n' >j.yaml
run 0 mpi 2 run j.yaml --quiet
before=$(sum j.h5)
run 2 mpi 2 run j.yaml --quiet
[ "$(grep -c "^headfuse run" err.txt)" = 1 ] || fail "expected one message: $(cat err.txt)"
grep -q "^headfuse run: j.h5: exists; rerun with --resume to keep its rows (entries not in it are run), or with --force to overwrite it" err.txt ||
  fail "run: $(cat err.txt)"
[ "$(sum j.h5)" = "$before" ] && [ ! -e j.h5.shards ] || fail "a refused run touched j.h5 or made state"
run 0 mpi 2 run j.yaml --quiet --force
[ "$(sum j.h5)" != "$before" ] || fail "--force did not rewrite j.h5"
echo "ok: run keeps its output unless --resume or --force"
