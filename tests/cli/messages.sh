# Messages for common mistakes (issue 13, points 7 and 8): `table`/`verify` on a file
# that is not HDF5 (exit 2, "not an HDF5 file"); on a result an interrupted search has
# not written yet (the message points to R.h5.shards/ and --resume); `search --resume`
# on the shards of another search (what differs, what to do); `verify` of several files;
# --max-atoms below the lower bound (nothing can be searched).
. "$HF_SOURCE_DIR/tests/lib.sh"

# ---- a file that is not HDF5 at all: bad input (2), not a corrupt file (6)
cp "$SRC/data/two_heads_shared.json" t.json
for cmd in table verify; do
  run 2 "$HEADFUSE" $cmd t.json
  [ "$(cat err.txt)" = "headfuse $cmd: t.json: not an HDF5 file (a result file is the RESULT.h5 that headfuse search or run writes)" ] ||
    fail "$cmd on JSON: $(cat err.txt)"
done
: >empty.h5
run 2 "$HEADFUSE" table empty.h5
grep -q "empty.h5: not an HDF5 file" err.txt || fail "empty file: $(cat err.txt)"
# a damaged HDF5 file (its signature kept) is still corrupt: 6
run 0 mpi 1 search --family wd:d=2 --span 1 --out good.h5 --quiet
head -c 3000 good.h5 >cut.h5
run 6 "$HEADFUSE" table cut.h5
grep -q "cut.h5: not a readable HDF5 file (truncated or corrupt?)" err.txt || fail "truncated: $(cat err.txt)"
echo "ok: not HDF5 -> exit 2 'not an HDF5 file'; a truncated HDF5 file -> exit 6"

# ---- a search stopped before it wrote its result (SIGUSR1 to mpirun: status 75)
spec=(--family chain:d=2 --span 5 --no-prune)
mpi_bg 2 search "${spec[@]}" --out s.h5 --quiet
wait_until "compgen -G 's.h5.shards/run-*.h5' >/dev/null"
sleep 1
signal_job USR1 75
for cmd in table verify; do
  run 4 "$HEADFUSE" $cmd s.h5
  grep -q "^headfuse $cmd: s.h5: no such file, but s.h5.shards/ holds the saved work of a search or run that was stopped before writing it: rerun that command with --resume to finish it and write s.h5" err.txt ||
    fail "$cmd on an unwritten result: $(cat err.txt)"
done
run 4 "$HEADFUSE" table nothing.h5
grep -q "nothing.h5: cannot open result: No such file or directory" err.txt || fail "missing: $(cat err.txt)"
echo "ok: table/verify of a result not written yet point to its shards and --resume"

# ---- --resume with the shards of another search: what differs and what to do
run 2 mpi 2 search --family chain:d=2 --span 4 --no-prune --out s.h5 --quiet --resume
[ "$(grep -c "^headfuse search" err.txt)" = 1 ] || fail "expected one message: $(cat err.txt)"
grep -q "shard of another search: it holds 'chain:d=2 span 5, engine plain, max_atoms none' (fingerprint .*); this search is 'chain:d=2 span 4, engine plain, max_atoms none': rerun the command of the search that wrote the shards with --resume to finish it, or remove s.h5.shards to start this one over" err.txt ||
  fail "another search's shards: $(cat err.txt)"
run 2 mpi 2 search --family chain:d=2 --span 5 --out s.h5 --quiet --resume
grep -q "it holds 'chain:d=2 span 5, engine plain, max_atoms none' .* this search is 'chain:d=2 span 5, engine auto, max_atoms none'" err.txt ||
  fail "another engine: $(cat err.txt)"
run 0 mpi 2 search "${spec[@]}" --out s.h5 --quiet --resume
echo "ok: shards of another search named with both descriptions"

# ---- verify takes several files, like table
run 0 mpi 1 search --family chain:d=2 --span 2 --out c.h5 --quiet
run 0 "$HEADFUSE" verify good.h5 c.h5 s.h5
[ "$(grep -c "witness verified exactly" out.txt)" = 3 ] || fail "verify of 3 files: $(cat out.txt)"
grep -q "^c.h5: row 0 chain:d=2: 1 witness verified exactly" out.txt || fail "lines name the file: $(cat out.txt)"
run 2 "$HEADFUSE" verify good.h5 t.json c.h5
grep -q "t.json: not an HDF5 file" err.txt || fail "verify with a bad file: $(cat err.txt)"
[ "$(grep -c "verified exactly" out.txt)" = 2 ] || fail "every other file is still verified: $(cat out.txt)"
echo "ok: verify checks several files; the first unreadable one sets the status"

# ---- --max-atoms below the lower bound: nothing can be searched
run 2 mpi 2 search --family wd:d=2 --span 2 --max-atoms 3 --out b.h5 --quiet
[ "$(grep -c "^headfuse search" err.txt)" = 1 ] || fail "expected one message: $(cat err.txt)"
grep -q "^headfuse search: --max-atoms 3: below the lower bound LB = 4 of wd:d=2 (newton_vertices, valid for any keys): no head of at most 3 atoms equals it, so nothing can be searched; give --max-atoms 4 or more, or no limit" err.txt ||
  fail "search --max-atoms below LB: $(cat err.txt)"
[ ! -e b.h5 ] && [ ! -e b.h5.shards ] || fail "something was written"
printf 'entries:\n  - {family: wd, d: 1, span: 1}\n  - {family: chain, d: 2, span: 2, max_atoms: 3}\n' >m.yaml
run 2 mpi 2 run m.yaml --quiet
grep -Eq "^headfuse run: (rank 1: )?m.yaml:3: entries\\[1\\] \\(chain:d=2 span 2 max_atoms 3\\): max_atoms 3: below the lower bound LB = 7" err.txt ||
  fail "run with max_atoms below LB: $(cat err.txt)"
[ ! -e m.h5 ] && [ ! -e m.h5.shards ] || fail "work started"
echo "ok: max_atoms below LB refused (search and run), nothing written"
