# Large rows (docs/search.md, "Large rows") on small targets, made large by
# HEADFUSE_LARGE_MIN_TERMS=0: P/Q in slices over the ranks, candidates decided by classes,
# the witness streamed by every rank into one file. Against the ordinary search: the same
# m*, the same minimal supports (keys), the same candidates; across 1, 2, 3 and 4 ranks the
# same file rows, witnesses included; every witness verified whole and, read in pieces
# (HEADFUSE_SUPPORTS_HOLD_MAX=0), slice by slice on 1 and 2 ranks; a planted bad value
# fails there; a job with large rows; a stop while the witness is written resumes; a box
# past 2^32 points (docs/targets.md, "Limits").
. "$HF_SOURCE_DIR/tests/lib.sh"

# the rows' fields that must agree, and the supports' keys (not the witness: where the
# null space has several dimensions the two paths may pick different points of it)
keys_json() {
  "$HEADFUSE" table "$1" --json --supports | $PY -c '
import json, sys
for r in json.load(sys.stdin):
    print(json.dumps([r["m_star"], r["status"], r["n_min_raw"], r["n_min_sym"], r["nodes"],
                      r["supports"]]))'
}

# the rows as stored, witnesses included, without the timings
rows_dump() {
  $PY - "$1" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for i in sorted(f["rows"], key=int):
        g = f["rows"][i]
        for name in ("keys", "weights", "weighted_values"):
            print(name, g[name].dtype, g[name].shape, g[name][...].tolist())
PY
}

specs=("--family chain:d=4 --span 3" "--family chain:d=5 --span 3" "--family wd:d=3 --span 1"
       "--family multi:d=2,k=3 --span 2" "$SRC/tests/fixtures/good/dv2.json --span 2"
       "$SRC/data/two_heads_shared.json --span 2" "--family chain:d=2 --span 3")
for spec in "${specs[@]}"; do
  # shellcheck disable=SC2086
  mpi 1 search $spec --out ref.h5 --force --quiet >/dev/null
  want=$(keys_json ref.h5)
  ref=""
  for n in 1 2 3 4; do
    # shellcheck disable=SC2086
    HEADFUSE_LARGE_MIN_TERMS=0 mpi "$n" search $spec --out "l$n.h5" --force >"o$n.txt" 2>"e$n.txt" ||
      fail "$spec: large row on $n ranks: $(cat "e$n.txt")"
    got=$(keys_json "l$n.h5")
    [ "$got" = "$want" ] || fail "$spec: large row on $n ranks differs from the ordinary search:
$got
$want"
    dump=$(rows_dump "l$n.h5")
    if [ -z "$ref" ]; then ref=$dump; fi
    [ "$dump" = "$ref" ] || fail "$spec: the witness on $n ranks differs from 1 rank's"
    run 0 "$HEADFUSE" verify "l$n.h5"
  done
  # read in pieces: the slices of verify, on 1 and 2 ranks (when there is a support)
  if [ "$($PY -c 'import json,sys; print(json.loads(sys.argv[1])[0] or 0)' "$want")" != 0 ]; then
    for n in 1 2; do
      HEADFUSE_SUPPORTS_HOLD_MAX=0 run 0 mpi "$n" verify l1.h5
      grep -q "verified exactly" out.txt || fail "$spec: sliced verify on $n ranks: $(cat out.txt)"
    done
  fi
  echo "ok: $spec: large row = ordinary search; 1-4 ranks identical; verified"
done

# a planted wrong weighted value in a large witness fails, whole and slice by slice
cp l1.h5 bad.h5
$PY - <<'PY' || fail "planting failed"
import h5py
with h5py.File("bad.h5", "r+") as f:
    ds = f["rows/0/weighted_values"]
    ds[0, 3, 0] = int(ds[0, 3, 0]) + 5
PY
run 1 "$HEADFUSE" verify bad.h5
grep -q "FAILED" out.txt || fail "planted value, whole: $(cat out.txt err.txt)"
for n in 1 2; do
  HEADFUSE_SUPPORTS_HOLD_MAX=0 run 1 mpi "$n" verify bad.h5
  grep -q "support 0: FAILED" out.txt || fail "planted value, $n ranks in pieces: $(cat out.txt err.txt)"
done
echo "ok: a planted value fails, whole and in pieces"

# a job of large rows on 2 ranks: the rows of the separate searches
cat >job.yaml <<EOF
name: large
entries:
  - {family: chain, d: [4, 5], span: 3}
  - {target: $SRC/tests/fixtures/good/dv2.json, span: 2}
EOF
HEADFUSE_LARGE_MIN_TERMS=0 run 0 mpi 2 run job.yaml --out job.h5 --quiet
run 0 "$HEADFUSE" verify job.h5
[ "$(grep -c "verified exactly" out.txt)" = 3 ] || fail "job: $(cat out.txt)"
for d in 4 5; do
  mpi 1 search --family chain:d=$d --span 3 --out c$d.h5 --quiet >/dev/null
done
$PY - job.h5 c4.h5 c5.h5 <<'PY' || fail "job rows differ from the searches'"
import sys, h5py
with h5py.File(sys.argv[1], "r") as j:
    for i, path in enumerate(sys.argv[2:]):
        with h5py.File(path, "r") as c:
            assert (j["rows"][str(i)]["keys"][...] == c["rows/0/keys"][...]).all(), path
PY
echo "ok: a job of large rows on 2 ranks"

# a stop while the witness is written: exit 75, nothing kept but the shards; --resume
# writes the same file
HEADFUSE_LARGE_MIN_TERMS=0 HEADFUSE_STOP_AT=write:1 run 75 mpi 2 search --family chain:d=5 --span 3 --out s.h5
[ ! -e s.h5 ] || fail "a stopped search left s.h5"
[ -d s.h5.shards ] || fail "a stopped search lost its shards"
HEADFUSE_LARGE_MIN_TERMS=0 run 0 mpi 2 search --family chain:d=5 --span 3 --out s.h5 --resume
[ "$(rows_dump s.h5)" = "$(HEADFUSE_LARGE_MIN_TERMS=0 mpi 1 search --family chain:d=5 --span 3 --out t.h5 --quiet >/dev/null; rows_dump t.h5)" ] ||
  fail "the resumed witness differs"
echo "ok: a stop while the witness is written resumes to the same file"

# a stop in every phase of a large row (building the slices, the classes, the rays, the
# sizes, the witness), on one rank only or on every rank: exit 75, and --resume gives the
# file of an uninterrupted run
want=$(rows_dump t.h5)
for at in fraction:500 rows:10 rays:50 sizes:1 write:50; do
  for only in 1 ""; do
    rm -rf s.h5 s.h5.shards
    HEADFUSE_FAULT_RANK=$only HEADFUSE_LARGE_MIN_TERMS=0 HEADFUSE_STOP_AT=$at \
      run 75 mpi 2 search --family chain:d=5 --span 3 --out s.h5 --quiet
    HEADFUSE_LARGE_MIN_TERMS=0 run 0 mpi 2 search --family chain:d=5 --span 3 --out s.h5 --resume --quiet
    [ "$(rows_dump s.h5)" = "$want" ] || fail "stopped at $at (rank ${only:-all}): the resumed file differs"
  done
done
echo "ok: a stop in each phase of a large row, on one rank or all, exits 75 and resumes"

# a box past 2^32 points (docs/targets.md, "Limits"): sigma(z) + sigma(2 z), z = (1, ..., 1) . q,
# in d = 31 at span 3 has 4^31 = 2^62 points, keys up to index 2^62 - 1. An ordinary search
# refuses it; as a large row on 2 ranks it gives the rows of the same target in one variable
# (an ordinary search), each key repeated along the 31 coordinates, verified
for d in 1 31; do
  $PY - "$d" <<'PY' || fail "diagonal target $d"
import json, sys
d = int(sys.argv[1])
heads = [{"atoms": [{"key": [k * i] * d, "weight": "1", "value": str(i)} for i in (0, 1)]}
         for k in (1, 2)]
json.dump({"name": "diagonal", "d": d, "heads": heads}, open("diag%d.json" % d, "w"))
PY
done
run 2 mpi 1 search diag31.json --span 3 --out o31.h5
grep -q "box {0..3}^31 has more than 4294967295 points (point indices are 32 bits except in a large row" err.txt ||
  fail "ordinary d = 31: $(cat err.txt)"
mpi 1 search diag1.json --span 3 --out o1.h5 --force --quiet >/dev/null
HEADFUSE_LARGE_MIN_TERMS=0 run 0 mpi 2 search diag31.json --span 3 --out l31.h5 --force --quiet
run 0 "$HEADFUSE" verify l31.h5
grep -q "verified exactly" out.txt || fail "d = 31: $(cat out.txt)"
$PY - o1.h5 l31.h5 <<'PY' || fail "d = 31 differs from one variable"
import sys, h5py
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    ka, kb = a["rows/0/keys"][...], b["rows/0/keys"][...]
    assert ka.shape[1] == 4 and kb.shape == ka.shape[:2] + (31,), (ka.shape, kb.shape)
    assert (kb == ka).all()  # every coordinate of each key is the one variable's key
    for name in ("weights", "weighted_values"):
        assert (a["rows/0"][name][...] == b["rows/0"][name][...]).all(), name
    assert a["table"][0]["m_star"] == b["table"][0]["m_star"]
PY
echo "ok: a large row's box past 2^32 points (d = 31, span 3) = the same target in one variable"
