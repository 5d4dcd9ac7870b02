# A plan before a run (docs/cluster.md, "A plan before a run"): `run --list`, `target
# --span` and `slurm/submit --dry-run` print, per row, the engine that will run (auto
# resolved, the same as the run's row), the ranks it keeps busy, memory per rank and per
# node, and a time estimate with its basis; a plan whose ranks on one node exceed the
# node's memory is refused before it reaches the queue, naming the ranks and the node, and
# the default limit per rank divides by the ranks asked for, not by one.
. "$HF_SOURCE_DIR/tests/lib.sh"
unset HEADFUSE_MAX_MEMORY SLURM_MEM_PER_CPU SLURM_MEM_PER_NODE SLURM_CPUS_PER_TASK
export HF_HEADFUSE=$HEADFUSE

# chain:d=15 at span 3: a large row (auto takes the cone); the same with the layered
# engine: an ordinary row of about 65.7 GiB a rank, whatever the ranks
printf 'name: c15\nentries:\n  - {family: chain, d: 15, span: 3}\n' >c15.yaml
printf 'name: c15l\nentries:\n  - {family: chain, d: 15, span: 3, engine: layered}\n' >c15l.yaml

# run --list --ranks 64: the resolved engine, the busy ranks, memory per rank and per node,
# the time with its basis
run 0 "$HEADFUSE" run c15.yaml --list --ranks 64 --node-memory 256G
grep -q "^plan: 64 rank(s) on 1 node(s) (64 a node), a node's memory 256 GiB (--node-memory 256G" out.txt ||
  fail "plan nodes: $(cat out.txt)"
grep -q "^plan 0: engine cone, a large row (docs/search.md, \"Large rows\"); ranks 64 of 64 busy building the [0-9]* slices of P/Q and writing the witness; the cone's candidates (R has 4 unknowns) are tested on every rank alike; memory [0-9.]* MiB a rank; 64 rank(s) x [0-9.]* MiB = [0-9.]* GiB a node; time about [0-9]* s for the search on 64 rank(s) (cost model of docs/cluster.md, fitted on chain at span 3" out.txt ||
  fail "plan 0: $(cat out.txt)"
run 0 "$HEADFUSE" run c15.yaml --list --ranks 64 --json
[ "$(json_get "$(cat out.txt)" 'o["entries"][0]["engine"], o["entries"][0]["engine_requested"], o["entries"][0]["plan"]["busy_ranks"], o["entries"][0]["plan"]["large_row"], o["entries"][0]["plan"]["seconds"] > 0')" = \
  "('cone', 'auto', 64, True, True)" ] || fail "--list --json: $(cat out.txt)"
echo "ok: run --list plans chain:d=15 on 64 ranks: engine, busy ranks, memory per rank and node, time"

# the time model: 2 ranks at chain:d=15 within 15 % of the measured 72.2 s (docs/performance.md §18)
run 0 "$HEADFUSE" run c15.yaml --list --ranks 2 --json
json_get "$(cat out.txt)" 'abs(o["entries"][0]["plan"]["seconds"] / 72.2 - 1) < 0.15' | grep -q True ||
  fail "time model: $(cat out.txt)"

# a plan that cannot fit one node is refused, naming the ranks and the node
run 5 "$HEADFUSE" run c15l.yaml --list --ranks 64 --node-memory 250G --max-memory 70G
grep -q "chain:d=15 span 3: 64 ranks x 65.7 GiB = 4.10 TiB on one node, over the node's 250 GiB (--node-memory 250G; slurm/submit passes sbatch's --mem)" err.txt ||
  fail "node refusal: $(cat err.txt)"
# spread over 32 nodes, 2 ranks a node fit
run 0 "$HEADFUSE" run c15l.yaml --list --ranks 64 --nodes 32 --node-memory 250G --max-memory 70G
grep -q "^plan 0: engine layered; .*; memory 65.7 GiB a rank; 2 rank(s) x 65.7 GiB = 131 GiB a node; time unknown" out.txt ||
  fail "32 nodes: $(cat out.txt)"
# slurm/submit: the same refusal from sbatch's --mem, before anything is queued
run 2 "$SRC/slurm/submit" c15l.yaml --ntasks 64 --nodes 1 --sbatch --mem=250G --dry-run -- --max-memory 70G
grep -q "64 ranks x 65.7 GiB = 4.10 TiB on one node, over the node's 250 GiB" err.txt || fail "submit: $(cat err.txt)"
grep -q "submit: .*c15l.yaml: refused before it reaches the queue" err.txt || fail "submit: $(cat err.txt)"
[ ! -s out.txt ] || fail "submit printed a script for a refused plan: $(cat out.txt)"
# a bare --mem is Slurm's MB
run 2 "$SRC/slurm/submit" c15l.yaml --ntasks 64 --nodes 1 --sbatch --mem=256000 --dry-run -- --max-memory 70G
grep -q "over the node's 250 GiB (--node-memory 256000M" err.txt || fail "submit MB: $(cat err.txt)"
# the large row fits: its plan goes to stderr with the script on stdout
run 0 "$SRC/slurm/submit" c15.yaml --ntasks 64 --nodes 1 --sbatch --mem=250G --dry-run
grep -q "^plan 0: engine cone, a large row .* 64 rank(s) x [0-9.]* MiB = [0-9.]* GiB a node; time about" err.txt ||
  fail "submit plan: $(cat err.txt)"
grep -q "^sbatch .*--mem=250G" out.txt || fail "submit script: $(cat out.txt)"
echo "ok: a plan over a node's memory is refused by run --list and slurm/submit, naming ranks and node"

# the default limit per rank divides a node's memory by the ranks asked for, and says so
run 5 "$HEADFUSE" run c15l.yaml --list --ranks 64
grep -q "more than the limit of [0-9.]* [MG]iB (this machine's memory per rank: [0-9.]* GiB / 64 rank(s) on the node)" err.txt ||
  fail "default limit: $(cat err.txt)"
run 5 "$HEADFUSE" run c15l.yaml --list --ranks 64 --node-memory 250G
grep -q "on 64 rank(s) .*more than the limit of 3.91 GiB (the node's memory per rank: 250 GiB / 64 rank(s) on the node (--node-memory 250G))" err.txt ||
  fail "node limit: $(cat err.txt)"
echo "ok: the refusal names the ranks asked for"

# the planned engine is the one the run takes: cone, none (no support fits the span),
# layered, plain
cp "$SRC/data/two_heads_shared.json" t.json
cat >small.yaml <<'EOF2'
name: small
entries:
  - {family: wd, d: 2, span: 1}
  - {family: chain, d: 3, span: 2}
  - {family: chain, d: 2, span: 2, engine: layered}
  - {target: t.json, span: 2, prune: false}
  - {family: chain, d: 3, span: 4}
EOF2
run 0 "$HEADFUSE" run small.yaml --list --json
planned=$(json_get "$(cat out.txt)" '[e["engine"] for e in o["entries"]]')
[ "$planned" = "['cone', 'none', 'layered', 'plain', 'cone']" ] || fail "planned engines: $planned"
run 0 "$HEADFUSE" run small.yaml --list
grep -q "^plan 0: engine cone; ranks at most the cone's candidates at a size (R has 1 unknowns), known after its double description" out.txt ||
  fail "cone: $(cat out.txt)"
grep -q "^plan 1: engine none (no support fits the span); ranks no search" out.txt || fail "none: $(cat out.txt)"
grep -q "^plan 2: engine layered; ranks at most each size's units and cells, known after the size's preparation" out.txt ||
  fail "layered: $(cat out.txt)"
run 0 mpi 1 run small.yaml --quiet
ran=$("$HEADFUSE" table small.h5 --json | $PY -c 'import json,sys; print([r["engine"] for r in json.load(sys.stdin)])')
[ "$ran" = "$planned" ] || fail "planned $planned, ran $ran"
echo "ok: the planned engines are the ones the run takes"

# headfuse target --span prints the same plan; a row the bounds certify has no search
run 0 "$HEADFUSE" target --family wd:d=16 --span 1
grep -q "^plan        engine none (LB = UB)$" out.txt || fail "wd:d=16: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=15 --span 3 --ranks 64 --node-memory 256G
grep -q "^plan        engine cone, a large row" out.txt || fail "target plan: $(cat out.txt)"
grep -q "^plan        ranks 64 of 64 busy building" out.txt || fail "target plan: $(cat out.txt)"
grep -q "^plan        memory [0-9.]* MiB a rank; 64 rank(s) x [0-9.]* MiB = [0-9.]* GiB a node, within a node" out.txt ||
  fail "target plan: $(cat out.txt)"
grep -q "^plan        time about [0-9]* s for the search on 64 rank(s) (cost model of docs/cluster.md" out.txt ||
  fail "target plan: $(cat out.txt)"
run 0 "$HEADFUSE" target --family chain:d=15 --span 3 --ranks 64 --json
[ "$(json_get "$(cat out.txt)" 'o["memory"]["plan"]["engine"], o["memory"]["plan"]["busy_ranks"]')" = "('cone', 64)" ] ||
  fail "target --json plan: $(cat out.txt)"
# a node's memory is a whole number of bytes in both JSON outputs (it was a real in one)
SLURM_MEM_PER_NODE=256000 run 0 "$HEADFUSE" target --family chain:d=15 --span 3 --ranks 64 --json
[ "$(json_get "$(cat out.txt)" 'o["memory"]["plan"]["node_memory_bytes"]')" = 268435456000 ] ||
  fail "target --json node_memory_bytes: $(cat out.txt)"
SLURM_MEM_PER_NODE=256000 run 0 "$HEADFUSE" run c15.yaml --list --ranks 64 --json
[ "$(json_get "$(cat out.txt)" 'o["node_memory_bytes"]')" = 268435456000 ] ||
  fail "--list --json node_memory_bytes: $(cat out.txt)"
echo "ok: headfuse target --span prints the plan"

# a cone of more than 64 unknowns is warned of before it runs (issue 40, item 2): in the
# plan (run --list, --json) and by the search itself, before its double description;
# chain:d=3 at span 6 with the cone has 100 unknowns (3.5 minutes, docs/search.md)
printf 'name: c3\nentries:\n  - {family: chain, d: 3, span: 6, engine: cone}\n  - {family: chain, d: 3, span: 4}\n' >c3.yaml
run 0 "$HEADFUSE" run c3.yaml --list
grep -q "^plan 0: engine cone; .* time unknown, possibly hours (the warning below)$" out.txt || fail "cone plan: $(cat out.txt)"
grep -q "^plan 0: warning: the cone has 100 unknowns (more than 64): its double description may keep hundreds of thousands of rays" out.txt ||
  fail "cone warning: $(cat out.txt)"
grep -q "^plan 1: warning" out.txt && fail "a cone of 18 unknowns warned of: $(cat out.txt)"
run 0 "$HEADFUSE" run c3.yaml --list --json
[ "$(json_get "$(cat out.txt)" 'o["entries"][0]["plan"]["warning"] is not None, o["entries"][1]["plan"]["warning"]')" = "(True, None)" ] ||
  fail "--json warning: $(cat out.txt)"
# the search: the warning, then a stop while the rays are computed (exit 75)
run 75 env HEADFUSE_STOP_AT=rays:1 "$HEADFUSE" search --family chain:d=3 --span 6 --engine cone --out w.h5
grep -q "^\[chain:d=3\] warning: the cone has 100 unknowns" err.txt || fail "search warning: $(cat err.txt)"
echo "ok: a cone of 100 unknowns is warned of in the plan and by the search"

# the rule that set a first size above LB is said (issue 40, item 3): chain:d=5 at span 3
# in the layered engine starts at the within-span bound's 204, above LB 201 (stopped as
# soon as its face tables start)
run 75 env HEADFUSE_STOP_AT=tables:1 "$HEADFUSE" search --family chain:d=5 --span 3 --engine layered --out l5.h5
grep -q '^\[chain:d=5\] first size 204: the within-span bound (faces of Newt(Q) in the span, docs/search.md, "Shape rules"), above LB 201$' err.txt ||
  fail "first size: $(cat err.txt)"
echo "ok: the first size's rule is said when it is not LB"
