# Every bad-input fixture and bad option: one clear message naming the file or option,
# exit status 2, nothing on stdout.
. "$HF_SOURCE_DIR/tests/lib.sh"

n=0
for f in "$SRC"/tests/fixtures/bad/*.json; do
  name=$(basename "$f")
  for cmd in target check; do
    extra=()
    [ $cmd = check ] && extra=(--keys "0")
    run 2 "$HEADFUSE" $cmd "$f" "${extra[@]}"
    grep -q "$name" err.txt || fail "$cmd $name: message does not name the file: $(cat err.txt)"
    [ "$(wc -l <err.txt)" = 1 ] || fail "$cmd $name: expected one line: $(cat err.txt)"
    [ ! -s out.txt ] || fail "$cmd $name: printed on stdout"
  done
  n=$((n + 1))
done
[ "$n" -ge 12 ] || fail "only $n bad fixtures found"

run 2 "$HEADFUSE" target "$SRC/tests/fixtures/does-not-exist.json"
grep -q "does-not-exist.json" err.txt || fail "missing file not named"

# options
run 2 "$HEADFUSE" target --family nosuch:d=2
grep -q -- "--family" err.txt || fail "bad family not named"
run 2 "$HEADFUSE" target --family wd:d=0
run 2 "$HEADFUSE" target --family wd:d=65
run 2 "$HEADFUSE" target
run 2 "$HEADFUSE" target --family wd:d=2 --bogus
run 2 "$HEADFUSE" check --family wd:d=2 --keys "0,0;1"
grep -q -- "--keys" err.txt || fail "bad --keys not named"
run 2 "$HEADFUSE" check --family wd:d=2 --keys "0,0;x,1"
run 2 "$HEADFUSE" check --family wd:d=2 --keys "0,0;0,0"
run 2 "$HEADFUSE" check --family wd:d=2 --keys ""
run 2 "$HEADFUSE" check --family wd:d=2
run 2 "$HEADFUSE" search --family wd:d=2 --span 0 --out r.h5
grep -q -- "--span" err.txt || fail "bad --span not named"
run 2 "$HEADFUSE" search --family wd:d=2 --span 1
run 2 "$HEADFUSE" search --family wd:d=2 --span 1 --out r.h5 --max-atoms -3
run 2 "$HEADFUSE" nosuchcommand

# an option with a value given twice is refused (the first would be silently replaced);
# nothing runs, nothing is written
run 2 "$HEADFUSE" search --family wd:d=2 --span 2 --span 3 --out twice.h5
grep -q -- "^headfuse search: option --span given twice" err.txt || fail "repeated --span: $(cat err.txt)"
[ ! -e twice.h5 ] && [ ! -e twice.h5.shards ] || fail "a search ran with a repeated option"
run 2 "$HEADFUSE" target --family wd:d=2 --family wd:d=3
grep -q -- "option --family given twice" err.txt || fail "repeated --family: $(cat err.txt)"
run 2 "$HEADFUSE" approx --family wd:d=1 --atoms 1 --atoms=2 --out twice.h5
grep -q -- "option --atoms given twice" err.txt || fail "repeated --atoms: $(cat err.txt)"
run 2 "$HEADFUSE" run j.yaml --out a.h5 --out b.h5
grep -q -- "option --out given twice" err.txt || fail "repeated --out: $(cat err.txt)"
echo "bad input: $n fixtures x 2 commands and option errors all rejected with status 2"
