# What a row says and what gives it its meaning (issue 13, points 4 and 5): the four
# statuses (certified, exhaustive, infeasible: no support in the span, open: stopped at
# max_atoms) in text, JSON, CSV and RESULT.h5; each row's engine (cone / layered / plain), lb_rule and
# max_atoms in RESULT.h5 and in `headfuse table` (engine none: a row certified by LB = UB
# without a search); the job file's text as the root
# attribute job_text; and a file of format 1 (no settings, "exhaustive" without a
# support) read as engine unknown, max_atoms unknown, status infeasible.
. "$HF_SOURCE_DIR/tests/lib.sh"

# a target certified by the two-dimensional argument (m* = 6 = |supp Q|) whose LB is 5:
# sigma(q1 + q2) beside a head on the keys 0, e1, e2
cat >tri.json <<'EOF'
{"name": "triangle_diagonal", "d": 2, "dv": 1, "heads": [
  {"atoms": [{"key": [0,0], "weight": "1", "value": "0"}, {"key": [1,0], "weight": "1", "value": "1"},
             {"key": [0,1], "weight": "1", "value": "2"}]},
  {"atoms": [{"key": [0,0], "weight": "1", "value": "0"}, {"key": [1,1], "weight": "1", "value": "1"}]}]}
EOF
cat >rows.yaml <<'EOF'
# rows of every status
name: rows
entries:
  - {family: wd, d: 2, span: 1}                    # certified (LB = UB)
  - {family: multi, d: 1, k: 4, span: 3}           # exhaustive, m* = 4 (LB 3: slices)
  - {family: chain, d: 3, span: 2}                 # infeasible, no search: Newt(Q) is 3 wide
  - {family: chain, d: 3, span: 3, max_atoms: 22}  # open: stopped at 22 < m* = 24
  - {target: data/two_heads_shared.json, span: 2, prune: false}   # plain
  - {target: tri.json, span: 3}                    # certified: m* = 6 proven for all keys
  - {family: wd, d: 2, span: 2, engine: layered}   # certified, searched by the layered engine
  - {family: wd, d: 16, span: 1, engine: layered}  # certified by LB = UB alone: no search ran
EOF
run 0 mpi 2 run rows.yaml --quiet
# each row in words: what holds over all integer keys and within the span (issue 40, 4)
for w in '^\[1/8\] wd:d=2 span 1: .* 1 nodes ' \
  '^  over all integer keys: m\* = 4 (certified)$' \
  '^  within span 3: m\* = 4 (every smaller support decided); over all integer keys: 3 <= m\* <= 4 (not decided by this row)$' \
  '^  within span 2: no head equals the target; over all integer keys: 21 <= m\* <= 24 (not decided by this row)$' \
  '^  within span 3: no head up to max_atoms 22; over all integer keys: 21 <= m\* <= 24 (not decided by this row)$'; do
  grep -q "$w" out.txt || fail "run lines: no '$w' in: $(cat out.txt)"
done
want='certified,cone,0 exhaustive,cone,0 infeasible,none,0 open,cone,22 exhaustive,plain,0 certified,cone,0 certified,layered,0 certified,none,0'
rules='newton_vertices slices slices slices newton_vertices newton_2d newton_vertices newton_vertices'

# JSON: status, engine, max_atoms; m_star null for the infeasible and open rows
run 0 "$HEADFUSE" table rows.h5 --json
got=$($PY -c 'import json,sys; print(" ".join("%s,%s,%s" % (r["status"], r["engine"], r["max_atoms"]) for r in json.load(sys.stdin)))' <out.txt)
[ "$got" = "$want" ] || fail "table --json: $got (expected $want)"
got=$($PY -c 'import json,sys; print(" ".join(r["lb_rule"] for r in json.load(sys.stdin)))' <out.txt)
[ "$got" = "$rules" ] || fail "table --json lb_rule: $got (expected $rules)"
[ "$($PY -c 'import json,sys; r=json.load(sys.stdin)[5]; print(r["m_star"], r["lb"], r["status"])' <out.txt)" = "6 6 certified" ] ||
  fail "triangle_diagonal certified over all keys: $(cat out.txt)"
[ "$($PY -c 'import json,sys; r=json.load(sys.stdin)[2]; print(r["m_star"], r["n_min_raw"])' <out.txt)" = "None 0" ] ||
  fail "infeasible row: $(cat out.txt)"

# CSV: the same columns by name
run 0 "$HEADFUSE" table rows.h5 --csv
got=$($PY -c '
import csv, sys
print(" ".join("%s,%s,%s" % (r["status"], r["engine"], r["max_atoms"]) for r in csv.DictReader(sys.stdin)))' <out.txt)
[ "$got" = "$want" ] || fail "table --csv: $got"

# text: the infeasible row has its own status and no m*; the mode columns are there
run 0 "$HEADFUSE" table rows.h5
grep -Eq '^chain:d=3 +3 +2 +- +21 +slices +24 +infeasible +none +0 ' out.txt || fail "text table: $(cat out.txt)"
grep -Eq '^chain:d=3 +3 +3 +- +21 +slices +24 +open +cone +22 ' out.txt || fail "text table: $(cat out.txt)"
grep -Eq '^triangle_diagonal +2 +3 +6 +6 +newton_2d +6 +certified +cone +0 ' out.txt || fail "text table: $(cat out.txt)"
grep -Eq '^two_heads_shared .* exhaustive +plain +0 ' out.txt || fail "text table: $(cat out.txt)"
head -1 out.txt | grep -Eq "lb +lb_rule +ub +status +engine +max_atoms" || fail "text header: $(head -1 out.txt)"
grep -Eq '^wd:d=16 +16 +1 +65536 +65536 +newton_vertices +65536 +certified +none +0 ' out.txt || fail "text table: $(cat out.txt)"

# a missing file is skipped with a warning; none existing is an error (issue 40, 7)
run 0 "$HEADFUSE" table rows.h5 missing.h5
grep -q "^headfuse table: warning: missing.h5: no such file, skipped$" err.txt || fail "table, missing file: $(cat err.txt)"
[ "$(grep -c '^wd:d=2 ' out.txt)" = 2 ] || fail "table, missing file: rows of rows.h5: $(cat out.txt)"
run 4 "$HEADFUSE" table missing.h5 gone.h5
grep -q "missing.h5: cannot open result: No such file or directory" err.txt || fail "table, no file: $(cat err.txt)"

# RESULT.h5 itself: format 4, the fields, the job file's text
$PY - rows.h5 rows.yaml <<'PY' || fail "RESULT.h5 content"
import sys, h5py
want = "certified,cone,0 exhaustive,cone,0 infeasible,none,0 open,cone,22 exhaustive,plain,0 certified,cone,0 certified,layered,0 certified,none,0"
with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["format"].decode() == "headfuse-result-4", f.attrs["format"]
    t = f["table"][()]
    got = " ".join("%s,%s,%d" % (r["status"].decode(), r["engine"].decode(), r["max_atoms"]) for r in t)
    assert got == want, got
    assert f.attrs["job_text"].decode() == open(sys.argv[2]).read(), "job_text differs from the job file"
PY

# a single search: the infeasible status in its own line (no search ran: a support holds
# Newt(Q) up to translation, which is 3 wide, docs/bounds.md)
run 0 mpi 2 search --family chain:d=3 --span 2 --out inf.h5 --quiet
grep -q "chain:d=3 span 2: m\* = none in this span  \[infeasible\]  LB 21 (slices)  UB 24  engine none (no search: the span is below an extent of Newt(Q))" out.txt ||
  fail "search line: $(cat out.txt)"
$PY -c 'import h5py,sys; f=h5py.File(sys.argv[1],"r"); assert f.attrs["job_text"] == b"", f.attrs["job_text"]' inf.h5 ||
  fail "a search's job_text should be empty"
# a row that ran no search (LB = UB certified it) says so, whatever engine was asked for;
# and it is kept by --resume under any engine (no engine decided it)
run 0 mpi 2 search --family wd:d=16 --span 1 --engine plain --out w16.h5 --quiet
grep -q "wd:d=16 span 1: m\\* = 65536  \\[certified\\]  LB 65536 (newton_vertices)  UB 65536  engine none (no search: LB = UB)" out.txt ||
  fail "search line of a row without a search: $(cat out.txt)"
printf 'name: e\nentries:\n  - {family: wd, d: 16, span: 1}\n' >e.yaml
run 0 mpi 2 run e.yaml --quiet
printf 'name: e\nentries:\n  - {family: wd, d: 16, span: 1, engine: cone}\n  - {family: wd, d: 2, span: 1}\n' >e.yaml
run 0 mpi 2 run e.yaml --quiet --resume
grep -q "e.h5: 2 rows (1 run now, 1 finished earlier)" out.txt err.txt || fail "--resume reran the row without a search: $(cat out.txt err.txt)"
# a group the search could not compute (P/Q over 2^18 terms): "not computed" and why, in
# the line, the text table (n/c and a note below it), JSON (null and group_note) and the file.
# The target: data/two_heads_shared.json on q1, q2 and the head of data/cubic_factor.json on
# each of q3..q12 (5 x 3^10 terms; multi:d=11,k=3 served before the slices certified it
# without a search)
$PY - "$SRC/data/two_heads_shared.json" >wide.json <<'PY'
import json, sys
d = 12
heads = [{"atoms": [dict(a, key=a["key"] + [0] * (d - 2)) for a in h["atoms"]]}
         for h in json.load(open(sys.argv[1]))["heads"]]
heads += [{"atoms": [{"key": [m * (i == j) for i in range(d)], "weight": "1", "value": str(m)}
                     for m in range(3)]} for j in range(2, d)]
print(json.dumps({"name": "wide", "d": d, "dv": 1, "heads": heads}))
PY
run 0 mpi 2 search wide.json --span 2 --out m11.h5 --quiet
grep -q "wide span 2: m\\* = 295245 .* minimal supports 1 (1 up to symmetry; group not computed: P/Q has more than 2^18 terms)" out.txt ||
  fail "search line of a row without its group: $(cat out.txt)"
! grep -q "?" out.txt || fail "a '?' in the line: $(cat out.txt)"
run 0 "$HEADFUSE" table m11.h5 rows.h5
grep -Eq '^wide .* 1 +1 +n/c +2 ' out.txt || fail "text table: $(cat out.txt)"
grep -qx "n/c: wide span 2: group not computed: P/Q has more than 2^18 terms" out.txt ||
  fail "text table note: $(cat out.txt)"
[ "$(grep -c "^n/c" out.txt)" = 1 ] || fail "notes for rows whose group is known: $(cat out.txt)"
run 0 "$HEADFUSE" table m11.h5 --json
[ "$($PY -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["group_order"], r["n_min_sym"], r["group_note"])' <out.txt)" = "None 1 P/Q has more than 2^18 terms" ] ||
  fail "table --json: $(cat out.txt)"
[ "$($PY -c 'import json,sys; print({r["group_note"] for r in json.load(sys.stdin)})' < <("$HEADFUSE" table rows.h5 --json))" = "{None}" ] ||
  fail "group_note of rows whose group is known"
$PY -c 'import h5py,sys; f=h5py.File(sys.argv[1],"r"); assert f["rows/0"].attrs["group_note"] == b"P/Q has more than 2^18 terms"' m11.h5 ||
  fail "RESULT.h5: /rows/0 group_note"
echo "ok: statuses, engine and max_atoms in text, JSON, CSV and RESULT.h5; job_text; a group not computed"

# format 1: the 13 fields, "exhaustive" without a support, no job_text
$PY - rows.h5 old.h5 <<'PY' || fail "cannot make a format-1 file"
import shutil, sys, h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    t = f["table"][()]
    names = [n for n in t.dtype.names if n not in ("max_atoms", "engine", "lb_rule", "m_star_dec")]
    old = np.zeros(t.shape, dtype=[(n, t.dtype[n]) for n in names])
    for n in names:
        old[n] = t[n]
    old["status"][old["m_star"] == -1] = b"exhaustive"
    old["status"][3] = b"open"
    del f["table"]
    f.create_dataset("table", data=old).attrs["null_value"] = np.int64(-1)
    del f.attrs["job_text"]
    f.attrs["format"] = np.bytes_("headfuse-result-1")
PY
run 0 "$HEADFUSE" table old.h5 --json
got=$($PY -c 'import json,sys; print(" ".join("%s,%s,%s" % (r["status"], r["engine"], r["max_atoms"]) for r in json.load(sys.stdin)))' <out.txt)
[ "$got" = "certified,unknown,None exhaustive,unknown,None infeasible,unknown,None open,unknown,None exhaustive,unknown,None certified,unknown,None certified,unknown,None certified,unknown,None" ] ||
  fail "format 1 read: $got"
run 0 "$HEADFUSE" table old.h5
grep -Eq '^chain:d=3 .* infeasible +unknown +- ' out.txt || fail "format 1 text: $(cat out.txt)"
run 0 "$HEADFUSE" verify old.h5
echo "ok: a format-1 file reads with engine unknown and its empty rows as infeasible"
