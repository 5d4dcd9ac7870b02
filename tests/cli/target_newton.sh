# headfuse target: the lower bound's rule and the Newton vertex count (--json fields
# lb_rule and newton_vertices, and the words of the plain output), from small d to 64.
# lb is the best span-free bound: chain:d=4's end slices (69) and chain:d=3's 3-D argument
# (24, newton_3d) beside their 54 and 18 vertices; wdw's vertex count.
. "$HF_SOURCE_DIR/tests/lib.sh"

out=$("$HEADFUSE" target --family chain:d=4 --json)
[ "$(json_get "$out" 'o["lb"]')" = 69 ] || fail "chain:d=4 lb: $out"
[ "$(json_get "$out" 'o["lb_rule"]')" = end_slices ] || fail "chain:d=4 lb_rule: $out"
[ "$(json_get "$out" 'o["newton_vertices"]')" = 54 ] || fail "chain:d=4 newton_vertices: $out"
[ "$(json_get "$out" 'o["ub"]')" = 82 ] || fail "chain:d=4 ub: $out"
out=$("$HEADFUSE" target --family chain:d=3 --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["newton_vertices"], o["ub"]')" = "(24, 'newton_3d', 18, 24)" ] ||
  fail "chain:d=3: $out"

# 2 * 3^63 and the exact UB of chain_64: decimal strings above 2^53
out=$("$HEADFUSE" target --family chain:d=64 --json)
[ "$(json_get "$out" 'o["newton_vertices"]')" = 2289122546861674989771899392854 ] ||
  fail "chain:d=64 newton_vertices: $out"
[ "$(json_get "$out" 'type(o["newton_vertices"]).__name__')" = str ] || fail "big count must be a string: $out"
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], int(o["lb"]) > int(o["newton_vertices"])')" = "('5527149049851876473114500005888', 'slices', True)" ] ||
  fail "chain:d=64 lb: $out"
[ "$(json_get "$out" 'o["ub"]')" = 8153037068386673365197148827680768 ] || fail "chain:d=64 ub: $out"
[ "$(json_get "$out" 'o["ub_exact"]')" = True ] || fail "chain:d=64 ub_exact: $out"

out=$("$HEADFUSE" target --family wd:d=64 --json)
[ "$(json_get "$out" 'o["newton_vertices"]')" = 18446744073709551616 ] || fail "wd:d=64: $out"
[ "$(json_get "$out" 'o["certified"]')" = True ] || fail "wd:d=64 certified: $out"
out=$("$HEADFUSE" target --family multi:d=20,k=3 --json)
[ "$(json_get "$out" 'o["newton_vertices"]')" = 1048576 ] || fail "multi:d=20,k=3: $out"
[ "$(json_get "$out" 'type(o["newton_vertices"]).__name__')" = int ] || fail "small count must be a number: $out"
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["ub"], o["certified"]')" = "(3486784401, 'slices', 3486784401, True)" ] ||
  fail "multi:d=20,k=3 slices: $out"

# a constant target: sigma(q) + (1 - sigma(q)) = 1
cat >const.json <<'EOF'
{"name": "const", "d": 1, "dv": 1, "heads": [
  {"atoms": [{"key": [0], "weight": "1", "value": "0"}, {"key": [1], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0], "weight": "1", "value": "1"}, {"key": [1], "weight": "1", "value": "0"}]}]}
EOF
out=$("$HEADFUSE" target const.json --json)
[ "$(json_get "$out" 'o["lb"], o["lb_rule"], o["newton_vertices"]')" = "(1, 'trivial', 1)" ] ||
  fail "constant target: $out"

# one head of 70 x 70 keys (4900 atoms, not on a line): the vertex count is out of reach,
# newton_vertices is null and the face rule gives LB
$PY - >square.json <<'EOF'
import json
atoms = [{"key": [i, j], "weight": "1", "value": str((7 * i + 3 * j) % 5)}
         for i in range(70) for j in range(70)]
print(json.dumps({"name": "square", "d": 2, "dv": 1, "heads": [{"atoms": atoms}]}))
EOF
out=$("$HEADFUSE" target square.json --json)
[ "$(json_get "$out" 'o["newton_vertices"] is None')" = True ] || fail "square newton_vertices: $out"
[ "$(json_get "$out" 'o["lb_rule"]')" = face_rule ] || fail "square lb_rule: $out"
run 0 "$HEADFUSE" target square.json
grep -q "^lower bound 4  (face rule)$" out.txt || fail "square plain output: $(cat out.txt)"
grep -q "vertex count of the Newton polytope out of reach" out.txt || fail "square: $(cat out.txt)"

# the plain output says the rule in words
run 0 "$HEADFUSE" target --family wdw:d=3
grep -q "^lower bound 8  (vertices of the Newton polytope of the reduced denominator)$" out.txt ||
  fail "plain output: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=4
grep -q "^lower bound 69  (end slices: the limit targets at both ends and least positive multiples between)$" out.txt ||
  fail "plain output: $(cat out.txt)"
# what holds over all keys, in words, when nothing certifies it (issue 40, item 4)
grep -q "^open        69 <= m\* <= 82 over all integer keys  (no certificate" out.txt || fail "open line: $(cat out.txt)"
"$HEADFUSE" target --family chain:d=4 --json | $PY -c 'import json,sys; o=json.load(sys.stdin); assert o["span_free"] is None and "d = 2 and d = 3" in o["span_free_note"], o["span_free_note"]' ||
  fail "span_free_note"
run 0 "$HEADFUSE" target --family wd:d=3
grep -q "^open" out.txt && fail "a certified target said open: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=3
grep -q "^lower bound 24  (three-dimensional Newton argument)$" out.txt ||
  fail "plain output: $(cat out.txt)"

# large d answers quickly (the row of docs/performance.md; generous here: shared machine)
start=$(date +%s.%N)
"$HEADFUSE" target --family chain:d=20 --json >/dev/null
secs=$($PY -c "import time; print(round(time.time() - $start, 3))")
$PY -c "import sys; sys.exit(0 if $secs < 5 else 1)" || fail "chain:d=20 took $secs s"
echo "target lb_rule/newton_vertices: all assertions passed (chain:d=20 in $secs s)"
