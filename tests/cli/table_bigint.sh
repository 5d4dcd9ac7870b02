# m* beyond 64 bits (docs/hdf5-format.md, "/table"): wd:d=63 and wd:d=64 are certified
# without a search (LB = UB = 2^63, 2^64). Their m* prints exactly in the search and run
# lines, in `headfuse table` as text, --json (an integer), --csv and --markdown, and is in
# RESULT.h5 as /table's m_star_dec (h5dump, h5py) with the int64 m_star -1. A file of
# format 2 (tests/fixtures/results) reads unchanged.
. "$HF_SOURCE_DIR/tests/lib.sh"
P63=9223372036854775808
P64=18446744073709551616

run 0 mpi 1 search --family wd:d=64 --span 1 --out w64.h5
grep -q "^wd:d=64 span 1: m\* = $P64  \[certified\]" out.txt || fail "search line: $(cat out.txt)"
run 0 mpi 1 search --family wd:d=63 --span 2 --out w63.h5 --json
[ "$($PY -c 'import json,sys; r=json.load(sys.stdin); print(r["m_star"] == 2**63, type(r["m_star"]).__name__)' <out.txt)" = "True int" ] ||
  fail "search --json: $(cat out.txt)"
cat >big.yaml <<'EOF2'
name: big
entries:
  - {family: wd, d: [63, 64], span: 1}
  - {family: wd, d: 2, span: 1}
EOF2
run 0 mpi 2 run big.yaml
grep -q "^\[1/3\] wd:d=63 span 1: m\* = $P63  \[certified\]" out.txt || fail "run line: $(cat out.txt)"
grep -q "^\[2/3\] wd:d=64 span 1: m\* = $P64  \[certified\]" out.txt || fail "run line: $(cat out.txt)"
echo "ok: search and run lines"

# text: m* right-aligned like LB
run 0 "$HEADFUSE" table big.h5
grep -Eq "^wd:d=63 +63 +1 +$P63 +$P63 +newton_vertices +$P63 +certified" out.txt || fail "text: $(cat out.txt)"
grep -Eq "^wd:d=64 +64 +1 +$P64 +$P64 " out.txt || fail "text: $(cat out.txt)"
grep -Eq "^wd:d=2 +2 +1 +4 +4 " out.txt || fail "text: $(cat out.txt)"
# --json: integers, exact (Python's json reads any size)
run 0 "$HEADFUSE" table big.h5 w64.h5 --json
[ "$($PY -c '
import json, sys
rows = json.load(sys.stdin)
print([(r["name"], r["m_star"], type(r["m_star"]).__name__) for r in rows])' <out.txt)" = \
  "[('wd:d=63', $P63, 'int'), ('wd:d=64', $P64, 'int'), ('wd:d=2', 4, 'int'), ('wd:d=64', $P64, 'int')]" ] ||
  fail "--json: $(cat out.txt)"
grep -q "\"m_star\":$P64," out.txt || fail "--json: not a bare integer: $(cat out.txt)"
# --csv and --markdown
run 0 "$HEADFUSE" table big.h5 --csv
grep -q "^wd:d=64,64,1,$P64,$P64,newton_vertices,$P64,certified," out.txt || fail "--csv: $(cat out.txt)"
run 0 "$HEADFUSE" table big.h5 --markdown
grep -q "^| wd:d=63 | 63 | 1 | $P63 | $P63 | newton_vertices | $P63 | certified |" out.txt ||
  fail "--markdown: $(cat out.txt)"
echo "ok: table text, --json, --csv, --markdown"

# the file: format 4, m_star_dec exact beside m_star -1 (h5dump and h5py)
h5dump -a format big.h5 | grep -q '"headfuse-result-4"' || fail "format: $(h5dump -a format big.h5)"
h5dump -d table big.h5 >dump.txt
grep -q "\"$P64\"" dump.txt || fail "h5dump: no m_star_dec $P64: $(cat dump.txt)"
[ "$($PY - big.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    t = f["table"][()]
    print([(r["name"].decode(), int(r["m_star"]), int(r["m_star_dec"])) for r in t])
PY
)" = "[('wd:d=63', -1, $P63), ('wd:d=64', -1, $P64), ('wd:d=2', 4, 4)]" ] || fail "h5py: m_star, m_star_dec"
run 0 "$HEADFUSE" verify big.h5
echo "ok: RESULT.h5 holds m_star_dec (h5dump, h5py) and verifies"

# the plot's reader takes m_star_dec: its table shows m* exactly, and the plot is drawn
run 0 "$PY" "$SRC/tools/hf_plot.py" big.h5 -o big.png
grep -q "^| wd:d=64 | 64 | 1 | $P64 | $P64 | newton_vertices | $P64 | certified |" out.txt ||
  fail "hf_plot table: $(cat out.txt)"
[ -s big.png ] || fail "hf_plot wrote no PNG"
echo "ok: hf_plot tabulates and plots m* beyond 64 bits"

# an older file reads unchanged: format 2 had only the int64 (wd:d=64's m* unknown there)
cp "$SRC/tests/fixtures/results/format2.h5" .
run 0 "$HEADFUSE" table format2.h5
grep -Eq "^wd:d=2 +2 +1 +4 +4 " out.txt || fail "format 2: $(cat out.txt)"
grep -Eq "^wd:d=64 +64 +1 +- +$P64 " out.txt || fail "format 2: $(cat out.txt)"
run 0 "$HEADFUSE" table format2.h5 --json
[ "$($PY -c 'import json,sys; print([r["m_star"] for r in json.load(sys.stdin)])' <out.txt)" = "[4, None]" ] ||
  fail "format 2 --json: $(cat out.txt)"
run 0 "$HEADFUSE" verify format2.h5
echo "ok: a format-2 file reads unchanged"
