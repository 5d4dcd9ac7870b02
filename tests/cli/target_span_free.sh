# The span-free arguments in the command line (docs/search.md, "Certified over all keys"):
# headfuse target prints the 3-D face types and what the accounting proves (chain:d=3:
# certified, m* = 24 with one minimal support, every other support at least 25 keys, the
# fewest on a polygon; multi:d=3,k=3: the face accounting proves only the vertex bound 8,
# the slices certify 27), the 3-D
# certificate where it holds (the zonotope of e1, e2, e3, e1+e2+e3: m* = 15, unique),
# --json's span_free object, and a search row whose span holds a 3-D certified minimum
# gets status certified with lb_rule newton_3d; the 2-D argument is still named as before.
. "$HF_SOURCE_DIR/tests/lib.sh"

run 0 "$HEADFUSE" target --family chain:d=3
grep -q '^certified   m\* = 24 over all integer keys  (three-dimensional face accounting, newton_3d; the minimal support is supp(Q), unique up to translation)$' out.txt ||
  fail "chain:d=3 certified: $(cat out.txt)"
grep -q '^faces       Newt(Q): 18 vertices; 28 edges (28 sigmoid-type of length 1); 12 facets (4 hexagons with 1 inner key, 8 quadrilaterals)$' out.txt ||
  fail "chain:d=3 faces: $(cat out.txt)"
grep -q '^span-free   m\* >= 24 over all integer keys  (face accounting: a head whose hull is a translate of Newt(Q) has the keys supp(Q), 24, feasible; any other hull forces at least 25 keys, the fewest on a polygon)$' out.txt ||
  fail "chain:d=3 span-free: $(cat out.txt)"
out=$("$HEADFUSE" target --family chain:d=3 --json)
[ "$(json_get "$out" 'o["span_free"]["lb"], o["span_free"]["rule"], o["span_free"]["dim"]')" = "(24, 'newton_3d', 3)" ] ||
  fail "chain:d=3 span_free: $out"
[ "$(json_get "$out" 'o["span_free"]["supp_q"], o["span_free"]["other_supports_at_least"], o["span_free"]["weakest"]')" = "(24, 25, 'a polygon')" ] ||
  fail "chain:d=3 span_free counts: $out"
[ "$(json_get "$out" 'o["m_star_certified"], o["certified_rule"], o["lb"], o["lb_rule"]')" = "(24, 'newton_3d', 24, 'newton_3d')" ] ||
  fail "chain:d=3: $out"

run 0 "$HEADFUSE" target --family multi:d=3,k=3
grep -q '^certified   m\* = 27  (LB = UB)$' out.txt || fail "multi:d=3,k=3 certified by the slices: $(cat out.txt)"
grep -q '^span-free   m\* >= 8 over all integer keys ' out.txt || fail "multi:d=3,k=3: $(cat out.txt)"

cat >diagonal.json <<'EOF'
{"name": "diagonal", "d": 3, "dv": 1, "heads": [
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [1,0,0], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [0,1,0], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [0,0,1], "weight": "1", "value": "1"}]},
  {"atoms": [{"key": [0,0,0], "weight": "1", "value": "0"}, {"key": [1,1,1], "weight": "1", "value": "1"}]}]}
EOF
run 0 "$HEADFUSE" target diagonal.json
grep -q '^certified   m\* = 15 over all integer keys  (three-dimensional face accounting, newton_3d; the minimal support is supp(Q), unique up to translation)$' out.txt ||
  fail "diagonal certified: $(cat out.txt)"
out=$("$HEADFUSE" target diagonal.json --json)
[ "$(json_get "$out" 'o["m_star_certified"], o["certified_rule"], o["lb"], o["lb_rule"], o["ub"]')" = "(15, 'newton_3d', 15, 'newton_3d', 15)" ] ||
  fail "diagonal --json: $out"

# a row: the span holds the minimum, so it is certified for every span
run 0 mpi 2 search diagonal.json --span 3 --out d.h5 --quiet
run 0 "$HEADFUSE" table d.h5 --json
[ "$($PY -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["m_star"], r["lb"], r["lb_rule"], r["status"])' <out.txt)" = "15 15 newton_3d certified" ] ||
  fail "diagonal row: $(cat out.txt)"

# two dimensions: unchanged words (a target the slices leave at LB 5, certified m* = 6 by the
# 2-D argument), and span_free says which argument ran; chain:d=2 is LB = UB = 7 now
cat >tri.json <<'EOF'
{"name": "triangle_diagonal", "d": 2, "dv": 1, "heads": [
  {"atoms": [{"key": [0,0], "weight": "1", "value": "0"}, {"key": [1,0], "weight": "1", "value": "1"},
             {"key": [0,1], "weight": "1", "value": "2"}]},
  {"atoms": [{"key": [0,0], "weight": "1", "value": "0"}, {"key": [1,1], "weight": "1", "value": "1"}]}]}
EOF
run 0 "$HEADFUSE" target tri.json
grep -q '^certified   m\* = 6 over all integer keys  (two-dimensional Newton argument; the minimal support is supp(Q), unique up to translation)$' out.txt ||
  fail "triangle_diagonal: $(cat out.txt)"
grep -q '^lower bound 6  (two-dimensional Newton argument)$' out.txt || fail "triangle_diagonal: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=2
grep -q '^certified   m\* = 7  (LB = UB)$' out.txt || fail "chain:d=2: $(cat out.txt)"
out=$("$HEADFUSE" target --family chain:d=2 --json)
[ "$(json_get "$out" 'o["span_free"]["dim"], o["span_free"]["lb"], o["span_free"]["rule"]')" = "(2, 7, 'newton_2d')" ] ||
  fail "chain:d=2 span_free: $out"
out=$("$HEADFUSE" target --family wd:d=4 --json)
[ "$(json_get "$out" 'o["span_free"]')" = None ] || fail "wd:d=4 span_free: $out"
echo ok
