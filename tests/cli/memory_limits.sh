# Estimates instead of fixed ceilings (docs/targets.md, "Limits"): a row whose memory
# estimate per rank exceeds the limit is refused before anything is built, by `headfuse
# search`, `headfuse run` (the preflight), `run --list` and `slurm/submit --dry-run`
# (no Slurm needed), with a message naming the entry, the estimate, the limit and where
# it comes from, the option that raises it and `headfuse target` for the bounds only. The
# limit comes from --max-memory, the job's max_memory, HEADFUSE_MAX_MEMORY or this
# machine's memory per rank; entries that fit pass. The box's 32-bit point indices stay
# a limit of their own outside large rows, which take boxes up to 2^63 - 1 points.
. "$HF_SOURCE_DIR/tests/lib.sh"
unset HEADFUSE_MAX_MEMORY SLURM_MEM_PER_CPU SLURM_MEM_PER_NODE

# headfuse target --span: the estimate (chain:d=10 span 3: 211 MiB; measured 191)
run 0 "$HEADFUSE" target --family chain:d=10 --span 3
grep -q "^memory      about [0-9.]* MiB per rank for a search at span 3 ([0-9.]* MiB process + [0-9.]* MiB P/Q + 18.0 MiB box + 129904 keys x [0-9]* B), within the limit" out.txt ||
  fail "target --span: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=10 --span 3 --max-memory 100M --json
[ "$(json_get "$(cat out.txt)" 'o["memory"]["fits"], o["memory"]["keys"], o["memory"]["limit_source"]')" = \
  "(False, 129904.0, '--max-memory 100M')" ] || fail "target --json: $(cat out.txt)"
run 0 "$HEADFUSE" target --family wd:d=64 --span 1
grep -q "^memory      span 1: certified by its bounds, no search is built" out.txt || fail "wd:d=64: $(cat out.txt)"
run 2 "$HEADFUSE" target --family chain:d=10 --max-memory 1G
echo "ok: headfuse target --span prints the estimate"

check_msg() { # FILE WHAT LIMIT-TEXT: the refusal's parts
  grep -q "$2: the search needs about [0-9.]* [MGT]iB per rank on [0-9]* rank(s) (.*docs/targets.md, \"Limits\"), more than the limit of $3" "$1" ||
    fail "message: $(cat "$1")"
  grep -q "raise it with --max-memory SIZE (job key max_memory, or HEADFUSE_MAX_MEMORY), or see the target's bounds without a search: headfuse target --family" "$1" ||
    fail "message: $(cat "$1")"
}

# run --list: entry 1 (chain:d=15 span 3, about 66 GiB) refused under 1G, with the line
cat >big.yaml <<'EOF2'
name: big
entries:
  - {family: chain, d: 3, span: 2}
  - {family: chain, d: 15, span: 3}
EOF2
run 5 "$HEADFUSE" run big.yaml --list --max-memory 1G
check_msg err.txt "big.yaml:4: entries\[1\] (chain:d=15 span 3): chain:d=15 span 3" "1.00 GiB (--max-memory 1G)"
grep -q "headfuse target --family chain:d=15$" err.txt || fail "message: $(cat err.txt)"
[ ! -s out.txt ] || fail "--list printed entries of a refused job: $(cat out.txt)"
run 0 "$HEADFUSE" run big.yaml --list --max-memory 200G
grep -q "^memory: at most [0-9.]* GiB per rank on 1 rank(s) (entry 1, chain:d=15 span 3), limit 200 GiB (--max-memory 200G)$" out.txt ||
  fail "--list: $(cat out.txt)"
# the default: this machine's memory per rank (refused unless it has the estimate)
fits=$("$HEADFUSE" target --family chain:d=15 --span 3 --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["memory"]["fits"])')
if [ "$fits" = False ]; then
  run 5 "$HEADFUSE" run big.yaml --list
  check_msg err.txt "chain:d=15 span 3" "[0-9.]* GiB (this machine's memory per rank: [0-9.]* GiB / 1 rank(s) on the node)"
fi
# the environment, then the job's max_memory, then the option
run 5 env HEADFUSE_MAX_MEMORY=2G "$HEADFUSE" run big.yaml --list
check_msg err.txt "chain:d=15 span 3" "2.00 GiB (HEADFUSE_MAX_MEMORY=2G)"
printf 'name: m\nmax_memory: 100M\nentries:\n  - {family: chain, d: 10, span: 3}\n' >m.yaml
run 5 env HEADFUSE_MAX_MEMORY=200G "$HEADFUSE" run m.yaml --list
check_msg err.txt "chain:d=10 span 3" "100 MiB (max_memory: 100M, m.yaml:2)"
run 0 "$HEADFUSE" run m.yaml --list --max-memory 1G
run 2 "$HEADFUSE" run m.yaml --list --max-memory 1X
grep -q "headfuse run: --max-memory 1X: must be a size in bytes such as 4G" err.txt || fail "bad size: $(cat err.txt)"
run 0 "$HEADFUSE" run "$SRC/jobs/demo.yaml" --list
grep -q "^memory: at most [0-9.]* MiB per rank on 1 rank(s) (entry [0-9]*, .*), limit" out.txt || fail "demo --list: $(cat out.txt)"
echo "ok: run --list refuses what does not fit (option, job key, environment, machine) and passes the rest"

# slurm/submit --dry-run: the same check, no Slurm needed; -- --max-memory goes to the
# check and to the batch job
export HF_HEADFUSE=$HEADFUSE
run 2 "$SRC/slurm/submit" big.yaml --dry-run -- --max-memory 1G
check_msg err.txt "entries\[1\] (chain:d=15 span 3): chain:d=15 span 3" "1.00 GiB (--max-memory 1G)"
grep -q "submit: .*big.yaml: refused before it reaches the queue (see above)" err.txt || fail "submit: $(cat err.txt)"
[ ! -s out.txt ] || fail "submit printed a script for a refused job: $(cat out.txt)"
run 0 "$SRC/slurm/submit" big.yaml --dry-run -- --max-memory 200G
grep -q "^#   srun .* run $WORK/big.yaml --max-memory 200G$" out.txt || fail "submit script: $(cat out.txt)"
grep -q "^memory: at most [0-9.]* GiB per rank" err.txt || fail "submit: $(cat err.txt)"
run 0 "$SRC/slurm/submit" m.yaml --dry-run -- --max-memory=1G
echo "ok: slurm/submit --dry-run refuses what does not fit"

# headfuse search and run under MPI: refused before any work (no shards, no result)
run 5 mpi 2 search --family chain:d=10 --span 3 --out s.h5 --max-memory 100M
check_msg err.txt "headfuse search: chain:d=10 span 3" "100 MiB (--max-memory 100M)"
[ "$(grep -c "the search needs" err.txt)" = 1 ] || fail "one message: $(cat err.txt)"
[ ! -e s.h5 ] && [ ! -e s.h5.shards ] || fail "a refused search left files"
run 5 env HEADFUSE_MAX_MEMORY=100M mpirun --oversubscribe -n 2 "$HEADFUSE" run m.yaml --max-memory 50M
check_msg err.txt "entries\[0\] (chain:d=10 span 3): chain:d=10 span 3" "50.0 MiB (--max-memory 50M)"
[ ! -e m.h5 ] && [ ! -e m.h5.shards ] || fail "a refused job left files"
run 5 mpi 2 run m.yaml
check_msg err.txt "chain:d=10 span 3" "100 MiB (max_memory: 100M, m.yaml:2)"
# what fits runs: chain:d=2 span 2, and chain:d=10 span 3 with the limit raised
run 0 mpi 2 search --family chain:d=2 --span 2 --out ok.h5 --max-memory 200M
grep -q "^chain:d=2 span 2: m\* = 7 " out.txt || fail "search: $(cat out.txt)"
run 0 mpi 1 run m.yaml --max-memory 1G --quiet
run 0 "$HEADFUSE" table m.h5 --csv
grep -q "^chain:d=10,10,3,129904," out.txt || fail "m.h5: $(cat out.txt)"
echo "ok: search and run refuse what does not fit, before any work, and run what fits"

# the box keeps its representation limit (32-bit point indices) outside large rows, whatever
# the memory: chain:d=20 at span 3 (4^20 points) with the layered engine
printf 'entries:\n  - {family: chain, d: 20, span: 3, engine: layered}\n' >box.yaml
run 2 "$HEADFUSE" run box.yaml --list --max-memory 1P
grep -q "span: box {0..3}^20 has more than 4294967295 points (point indices are 32 bits except in a large row, a cone search of more than 262144 estimated terms of Q: HF_SEARCH_BOX_MAX, docs/targets.md, \"Limits\")" err.txt ||
  fail "box: $(cat err.txt)"
echo "ok: the box's 32-bit limit stays outside large rows"

# a large row (engine auto takes the cone) never lists its points: its box may pass 2^32
# points (chain:d=16 at span 3 has 4^16 = 2^32) and is estimated instead, up to 2^63 - 1
printf 'entries:\n  - {family: chain, d: 20, span: 3}\n' >box.yaml
run 0 "$HEADFUSE" run box.yaml --list --max-memory 1P
grep -q "^memory: at most [0-9.]* TiB per rank on 1 rank(s) (entry 0, chain:d=20 span 3), limit 1.00 PiB (--max-memory 1P)$" out.txt ||
  fail "large box: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=16 --span 3 --max-memory 1P
grep -q "^memory      about [0-9.]* GiB per rank for a search at span 3 on 1 rank(s), a large row (.*), within the limit" out.txt ||
  fail "chain:d=16 span 3: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=64 --span 3
grep -q "^memory      span 3: no search can be built: span: box {0..3}^64 has more than 9223372036854775807 points (a large row numbers its points in a signed 64-bit integer: HF_SEARCH_LARGE_BOX_MAX" out.txt ||
  fail "chain:d=64 span 3: $(cat out.txt)"
echo "ok: a large row's box passes 2^32 points, up to 2^63 - 1"
