# The slices (docs/math.md §12; issue 38) in the command line: headfuse target certifies
# multi:d=D,k=3 (LB = 3^D = UB, rule slices, exactly past 64 bits), cubic_factor (3), a sum
# of three sigmoids with distinct biases on one coordinate (Descartes: 4); it keeps LB 2
# for 1 + 2t + 2t^2 (a binomial multiple exists although m* = 3) and multiplies a
# hexagon's M = 7 (Lemma 12.7) by the cubic's 3: 21 = UB; chain:d=4 gets 69 (end slices),
# which its search at span 3 (m* = 82) respects. Rows of 2-rank searches are
# certified: with the one size LB searched to count the supports where the box is small
# (multi:d=3,k=3 and the cubic at span 2), with no search at all where it is large
# (multi:d=13,k=3, multi:d=64,k=3: engine none, m* exact past 64 bits in the table).
. "$HF_SOURCE_DIR/tests/lib.sh"
P64=3433683820292512484657849089281 # 3^64

run 0 "$HEADFUSE" target --family multi:d=3,k=3
grep -q "^lower bound 27  (slices: least positive multiples of the blocks' reduced denominators, multiplied)$" out.txt ||
  fail "multi:d=3,k=3 LB: $(cat out.txt)"
grep -q '^certified   m\* = 27  (LB = UB)$' out.txt || fail "multi:d=3,k=3 certified: $(cat out.txt)"
out=$("$HEADFUSE" target --family multi:d=3,k=3 --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["newton_vertices"], o["ub"], o["certified"]')" = "(27, 'slices', 8, 27, True)" ] ||
  fail "multi:d=3,k=3 --json: $out"
# a row certified by LB = UB gives its m* and rule as the 2-D/3-D certificates do
[ "$(json_get "$out" 'o["m_star_certified"], o["certified_rule"]')" = "(27, 'slices')" ] ||
  fail "multi:d=3,k=3 m_star_certified: $out"

# 3^64: a decimal string in JSON, the digits on the text lines
out=$("$HEADFUSE" target --family multi:d=64,k=3 --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["ub"], o["certified"], type(o["lb"]).__name__')" = "('$P64', 'slices', '$P64', True, 'str')" ] ||
  fail "multi:d=64,k=3 --json: $out"
[ "$(json_get "$out" 'int(o["lb"]) == 3**64')" = True ] || fail "multi:d=64,k=3: not 3^64: $out"
run 0 "$HEADFUSE" target --family multi:d=64,k=3
grep -q "^lower bound $P64  (slices" out.txt || fail "multi:d=64,k=3 text: $(cat out.txt)"
grep -q "^certified   m\* = $P64  (LB = UB)$" out.txt || fail "multi:d=64,k=3 certified: $(cat out.txt)"

out=$("$HEADFUSE" target "$SRC/data/cubic_factor.json" --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["ub"], o["certified"]')" = "(3, 'slices', 3, True)" ] ||
  fail "cubic_factor: $out"

# sigma(q) + sigma(q + log 2) + sigma(q + log 3): (1 + t)(1 + 2t)(1 + 3t), three negative
# roots, so M = 4 = UB
cat >three.json <<'EOF'
{"name": "three_sigmoids", "d": 1, "dv": 1, "heads": [
  {"atoms": [{"key": [0], "weight": "1", "value": "0"}, {"key": [1], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0], "weight": "1", "value": "0"}, {"key": [1], "weight": "2", "value": "1"}]},
  {"atoms": [{"key": [0], "weight": "1", "value": "0"}, {"key": [1], "weight": "3", "value": "1"}]}]}
EOF
out=$("$HEADFUSE" target three.json --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["ub"], o["certified"]')" = "(4, 'slices', 4, True)" ] ||
  fail "three sigmoids: $out"

# 1 + 2t + 2t^2 divides 1 + 4t^4: M = 2, LB stays 2 (the vertices), while m* = 3
cat >binomial.json <<'EOF'
{"name": "binomial", "d": 1, "dv": 1, "heads": [
  {"atoms": [{"key": [0], "weight": "1", "value": "0"}, {"key": [1], "weight": "2", "value": "1"},
             {"key": [2], "weight": "2", "value": "2"}]}]}
EOF
out=$("$HEADFUSE" target binomial.json --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["ub"], o["certified"]')" = "(2, 'newton_vertices', 3, False)" ] ||
  fail "binomial: $out"
run 1 "$HEADFUSE" check binomial.json --keys "0;4"
grep -q "^feasible  no" out.txt || fail "binomial {0, 4}: $(cat out.txt)"
run 0 mpi 2 search binomial.json --span 6 --out b.h5 --quiet
grep -q "^binomial span 6: m\* = 3  \[exhaustive\]  LB 2 (newton_vertices)  UB 3 " out.txt ||
  fail "binomial search: $(cat out.txt)"

# two blocks: the hexagon of chain:d=2 on q1, q2 (6 vertices, M = 7 by Lemma 12.7) and the
# cubic on q3: LB 7 x 3 = 21 = UB
cat >hexcubic.json <<'EOF'
{"name": "hexagon_cubic", "d": 3, "dv": 1, "heads": [
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [1,0,0], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [0,1,0], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [1,1,0], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [0,0,1], "weight": "1", "value": "1"},
             {"key": [0,0,2], "weight": "1", "value": "2"}]}]}
EOF
out=$("$HEADFUSE" target hexcubic.json --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["newton_vertices"], o["ub"], o["certified"]')" = "(21, 'slices', 12, 21, True)" ] ||
  fail "hexagon and cubic: $out"

# rows: certified; the one size LB searched in a small box, no search in a large one
run 0 mpi 2 search --family multi:d=3,k=3 --span 2 --out m3.h5 --quiet
grep -q "^multi:d=3,k=3 span 2: m\* = 27  \[certified\]  LB 27 (slices)  UB 27  engine cone  minimal supports 1 " out.txt ||
  fail "multi:d=3,k=3 row: $(cat out.txt)"
run 0 mpi 2 search "$SRC/data/cubic_factor.json" --span 2 --out c.h5 --quiet
grep -q "^cubic_factor span 2: m\* = 3  \[certified\]  LB 3 (slices)  UB 3 " out.txt ||
  fail "cubic_factor row: $(cat out.txt)"
run 0 mpi 2 search --family multi:d=13,k=3 --span 2 --out m13.h5 --quiet
grep -q "^multi:d=13,k=3 span 2: m\* = 1594323  \[certified\]  LB 1594323 (slices)  UB 1594323  engine none (no search: LB = UB)" out.txt ||
  fail "multi:d=13,k=3 row: $(cat out.txt)"
run 0 mpi 2 search --family multi:d=64,k=3 --span 2 --out m64.h5 --quiet
grep -q "^multi:d=64,k=3 span 2: m\* = $P64  \[certified\]  LB $P64 (slices)  UB $P64  engine none" out.txt ||
  fail "multi:d=64,k=3 row: $(cat out.txt)"
run 0 "$HEADFUSE" table m3.h5 c.h5 m13.h5 m64.h5 --json
[ "$($PY -c '
import json, sys
print([(r["name"], r["m_star"], int(r["lb"]), r["lb_rule"], r["status"], r["engine"]) for r in json.load(sys.stdin)])' <out.txt)" = \
  "[('multi:d=3,k=3', 27, 27, 'slices', 'certified', 'cone'), ('cubic_factor', 3, 3, 'slices', 'certified', 'cone'), ('multi:d=13,k=3', 1594323, 1594323, 'slices', 'certified', 'none'), ('multi:d=64,k=3', $P64, $P64, 'slices', 'certified', 'none')]" ] ||
  fail "table --json: $(cat out.txt)"
run 0 "$HEADFUSE" table m64.h5
grep -Eq "^multi:d=64,k=3 +64 +2 +$P64 +$P64 +slices +$P64 +certified +none " out.txt || fail "table text: $(cat out.txt)"
# chain:d=4: the end slices (24 + 24 + 21), below the 82 the search finds at span 3
out=$("$HEADFUSE" target --family chain:d=4 --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["newton_vertices"], o["ub"]')" = "(69, 'end_slices', 54, 82)" ] ||
  fail "chain:d=4: $out"
run 0 mpi 2 search --family chain:d=4 --span 3 --out c4.h5 --quiet
grep -q "^chain:d=4 span 3: m\* = 82  \[exhaustive\]  LB 69 (end_slices)  UB 82 " out.txt ||
  fail "chain:d=4 row: $(cat out.txt)"
echo "ok: slices certify multi:d=D,k=3 and cubic_factor in target and in rows"
