# The paired timer of docs/performance.md (bench/paired.sh): alternate runs of two
# commands, one line per pair, the median ratio of A/B; a command that fails stops it with
# its name, and a bad N is refused.
. "$HF_SOURCE_DIR/tests/lib.sh"

run 0 "$SRC/bench/paired.sh" 3 'sleep 0.6' 'sleep 0.2'
[ "$(grep -c '^pair=' out.txt)" = 3 ] || fail "pairs: $(cat out.txt)"
# the ratio of 0.6 s to 0.2 s, whatever the start-up of sleep and a busy machine's delays
# (up to 0.1 s on B, 0.04 s on A): between 2 and 3.2
$PY - <<'PY' || fail "median: $(cat out.txt)"
import re
m = re.search(r"^median ratio=([0-9.]+) \(([0-9.]+) - ([0-9.]+)\) a_wall=([0-9.]+) b_wall=([0-9.]+)$",
              open("out.txt").read(), re.M)
assert m, "no median line"
r, lo, hi, a, b = map(float, m.groups())
assert 2.0 <= lo <= r <= hi <= 3.2, (r, lo, hi)
assert a >= 0.59 and b >= 0.19, (a, b)
PY
run 1 "$SRC/bench/paired.sh" 2 'true' 'exit 3'
grep -q "^paired: command failed: exit 3$" err.txt || fail "failed command: $(cat err.txt)"
run 2 "$SRC/bench/paired.sh" 0 'true' 'true'
grep -q "N must be a positive integer" err.txt || fail "bad N: $(cat err.txt)"
echo ok
