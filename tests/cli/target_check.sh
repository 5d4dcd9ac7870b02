# headfuse target and check: bounds, certified rows at large d, exact witnesses.
. "$HF_SOURCE_DIR/tests/lib.sh"

out=$("$HEADFUSE" target --family wd:d=40 --json)
[ "$(json_get "$out" 'o["lb"]')" = 1099511627776 ] || fail "wd:d=40 lb: $out"
[ "$(json_get "$out" 'o["ub"]')" = 1099511627776 ] || fail "wd:d=40 ub: $out"
[ "$(json_get "$out" 'o["head_atoms"]')" = 80 ] || fail "wd:d=40 head_atoms: $out"

out=$("$HEADFUSE" target --family wd:d=64 --json)
[ "$(json_get "$out" 'o["lb"]')" = 18446744073709551616 ] || fail "wd:d=64 lb: $out"
[ "$(json_get "$out" 'type(o["ub"]).__name__')" = str ] || fail "big ub must be a string: $out"

out=$("$HEADFUSE" target --family wd:d=3 --json)
[ "$(json_get "$out" 'o["product_head"]["verified"]')" = True ] || fail "W_3 product head: $out"
[ "$(json_get "$out" 'o["product_head"]["atoms"]')" = 8 ] || fail "W_3 product atoms: $out"
# the product head itself: keys, weights, values (values flat: dv = 1)
[ "$(json_get "$out" 'sorted(map(tuple, o["product_head"]["keys"])) == [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]')" = True ] ||
  fail "W_3 product keys: $out"
[ "$(json_get "$out" 'set(o["product_head"]["weights"])')" = "{'1'}" ] || fail "W_3 product weights: $out"
[ "$(json_get "$out" '[str(sum(k)) for k in o["product_head"]["keys"]] == o["product_head"]["values"]')" = True ] ||
  fail "W_3 product values (the number of ones): $out"
out=$("$HEADFUSE" target "$SRC/tests/fixtures/good/dv2.json" --json)
[ "$(json_get "$out" 'all(isinstance(v, list) for v in o["product_head"]["values"])')" = True ] ||
  fail "dv = 2: values per atom are arrays: $out"
# ... and in the text output, atom by atom, up to 64 atoms
run 0 "$HEADFUSE" target --family wd:d=2
grep -q "^product head: key -> weight, value$" out.txt || fail "text product head: $(cat out.txt)"
for atom in "(0,0) -> 1, 0" "(0,1) -> 1, 1" "(1,0) -> 1, 1" "(1,1) -> 1, 2"; do
  grep -qxF "  $atom" out.txt || fail "text product head lacks $atom: $(cat out.txt)"
done
run 0 "$HEADFUSE" target --family wd:d=7
grep -q "^product head: 128 atoms, listed by --json (product_head)$" out.txt || fail "wd:d=7 text: $(cat out.txt)"
[ "$(json_get "$("$HEADFUSE" target --family wd:d=7 --json)" 'len(o["product_head"]["keys"])')" = 128 ] ||
  fail "wd:d=7: --json lists every atom"
# lb/ub: JSON numbers below 2^53, decimal strings from 2^53 on (docs/targets.md)
out=$("$HEADFUSE" target --family wd:d=52 --json)
[ "$(json_get "$out" 'type(o["lb"]).__name__, o["lb"] == 2**52')" = "('int', True)" ] || fail "2^52: $out"
out=$("$HEADFUSE" target --family wd:d=53 --json)
[ "$(json_get "$out" 'type(o["lb"]).__name__, o["lb"]')" = "('str', '9007199254740992')" ] || fail "2^53: $out"
[ "$(json_get "$out" 'o["product_head"]')" = None ] || fail "huge product head must be null: $out"

# the memory estimate of P/Q (hf_fraction_estimate): in the text and in JSON, the figure
# of docs/performance.md §13 for chain:d=11 (61.2 MiB), and what docs/cluster.md
# says a rank holds besides
run 0 "$HEADFUSE" target --family chain:d=11 --json
[ "$(json_get "$(cat out.txt)" '"%.1f" % (o["fraction_bytes_estimate"] / 2**20)')" = 61.2 ] ||
  fail "fraction_bytes_estimate of chain:d=11: $(head -c 300 out.txt)"
grep -q "| chain:d=11 | .* | 61.2 | " "$SRC/docs/performance.md" || fail "docs/performance.md lacks chain:d=11's estimate 61.2"
run 0 "$HEADFUSE" target --family chain:d=11
grep -qx "memory      P/Q: about 61.2 MiB (estimate), built on each rank of a search, or dealt in slices over the ranks on a large row (docs/cluster.md, \"Memory per rank\")" out.txt ||
  fail "target: no memory line: $(cat out.txt)"
grep -q "^### Memory per rank$" "$SRC/docs/cluster.md" || fail "docs/cluster.md has no section Memory per rank"

# export round trip: the exported file describes the same target
"$HEADFUSE" target --family chain:d=2 --export chain2.json >/dev/null
a=$("$HEADFUSE" target --family chain:d=2 --json | $PY -c 'import json,sys; o=json.load(sys.stdin); print(o["lb"], o["ub"], o["head_atoms"])')
b=$("$HEADFUSE" target chain2.json --json | $PY -c 'import json,sys; o=json.load(sys.stdin); print(o["lb"], o["ub"], o["head_atoms"])')
[ "$a" = "$b" ] || fail "export round trip: $a vs $b"

# check: the product support of W_2 is feasible with weights equal, values = #ones
out=$("$HEADFUSE" check --family wd:d=2 --keys "0,0;1,0;0,1;1,1" --json)
[ "$(json_get "$out" 'o["feasible"]')" = True ] || fail "W_2 product support: $out"
[ "$(json_get "$out" 'o["witness"]["values"]')" = "['0', '1', '1', '2']" ] || fail "W_2 values: $out"
[ "$(json_get "$out" 'len(set(o["witness"]["weights"]))')" = 1 ] || fail "W_2 weights: $out"
[ "$(json_get "$out" 'o["max_abs_error"] < 1e-12')" = True ] || fail "W_2 numeric: $out"

# ... and W_2 minus any key is infeasible: exit status 1, the answer "no" (as grep and
# cmp say it), distinct from bad input (2) and the errors of include/headfuse/error.h
for keys in "1,0;0,1;1,1" "0,0;0,1;1,1" "0,0;1,0;1,1" "0,0;1,0;0,1"; do
  run 1 "$HEADFUSE" check --family wd:d=2 --keys "$keys" --json
  [ "$(json_get "$(cat out.txt)" 'o["feasible"]')" = False ] || fail "W_2 minus a key: $keys"
  [ ! -s err.txt ] || fail "an infeasible key set is no error: $(cat err.txt)"
done
run 0 "$HEADFUSE" check --family wd:d=2 --keys "0,0;1,0;0,1;1,1"
run 2 "$HEADFUSE" check --family wd:d=2 --keys "0,0;1"
"$HEADFUSE" check --help | grep -q "1 when" || fail "check --help does not name exit status 1"
grep -q "HF_EXIT_NO 1" "$SRC/include/headfuse/error.h" || fail "error.h does not define HF_EXIT_NO"
grep -q "1 infeasible (\`headfuse check\`" "$SRC/README.md" || fail "README's exit statuses lack 1"

# strict positivity: 1+x+x^2 has the signed multiple 1-x^3, so {0,3} must be infeasible
run 1 "$HEADFUSE" check "$SRC/data/cubic_factor.json" --keys "0;3" --json
[ "$(json_get "$(cat out.txt)" 'o["feasible"]')" = False ] || fail "cubic {0,3}: $(cat out.txt)"
out=$("$HEADFUSE" check "$SRC/data/cubic_factor.json" --keys "0;1;2" --json)
[ "$(json_get "$out" 'o["feasible"]')" = True ] || fail "cubic {0,1,2}: $out"

# plain output mentions the reason
run 1 "$HEADFUSE" check --family wd:d=1 --keys "0;2"
grep -q "feasible  no" out.txt || fail "plain check output: $(cat out.txt)"
echo "target/check: all assertions passed"
