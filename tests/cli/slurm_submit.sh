# slurm/submit without Slurm (issue 13, point 11): --help prints the usage (exit 0);
# an option without its value is a message, not "unbound variable"; --dry-run works
# with no sbatch on PATH, prints the sbatch command(s) as a script and the command each
# batch job runs, and submits nothing; headfuse run options after `--` (--json, --out)
# are passed on, the ones the scripts set themselves are refused with a reason; an
# existing result is refused unless --resume or `-- --force`. (The real cluster:
# tests/cli/slurm_e2e.sh.)
. "$HF_SOURCE_DIR/tests/lib.sh"
submit=("$SRC/slurm/submit")
export HF_HEADFUSE=$HEADFUSE
# a PATH without Slurm (a laptop): the system's tools only, no sbatch
mkdir bin
for t in bash sh sed head dirname basename cat printf; do ln -s "$(command -v $t)" bin/$t; done
nosl=(env PATH="$WORK/bin")
[ ! -x bin/sbatch ] && ! "${nosl[@]}" sh -c 'command -v sbatch' >/dev/null || fail "sbatch on the test PATH"

printf 'name: j\nentries:\n  - {family: wd, d: 1..2, span: 1}\n' >j.yaml

# --help: the usage on stdout, exit 0; no argument: the usage on stderr, exit 2
run 0 "${submit[@]}" --help
grep -q "^  slurm/submit \[options\] JOB.yaml \[options\] \[-- headfuse run options\]" out.txt || fail "--help: $(cat out.txt)"
grep -q -- "--dry-run" out.txt && [ ! -s err.txt ] || fail "--help: $(cat out.txt err.txt)"
run 0 "${submit[@]}" j.yaml --help
run 2 "${submit[@]}"
grep -q "slurm/submit \[options\] JOB.yaml" err.txt && [ ! -s out.txt ] || fail "no argument: $(cat err.txt)"
echo "ok: --help prints the usage (exit 0)"

# an option without its value
for opt in --time --ntasks --dir --partition --throttle; do
  run 2 "${submit[@]}" j.yaml "$opt"
  [ "$(cat err.txt)" = "submit: $opt needs a value (see slurm/submit --help)" ] || fail "$opt: $(cat err.txt)"
done
run 2 "${submit[@]}" j.yaml --time --ntasks 2
grep -q "submit: --time needs a value" err.txt || fail "--time --ntasks: $(cat err.txt)"
run 2 "${submit[@]}" j.yaml --time tomorrow --dry-run
grep -q "submit: --time tomorrow: must be a Slurm time" err.txt || fail "--time tomorrow: $(cat err.txt)"
! grep -q "unbound variable" err.txt || fail "unbound variable"
echo "ok: an option without a value is named"

# --dry-run with no Slurm at all: a script of sbatch commands, nothing submitted
run 2 "${nosl[@]}" "${submit[@]}" j.yaml
grep -q "sbatch not found: is this a Slurm login node? (--dry-run shows what would be submitted without Slurm)" err.txt ||
  fail "no sbatch: $(cat err.txt)"
run 0 "${nosl[@]}" "${submit[@]}" j.yaml --ntasks 4 --time 02:00:00 --dry-run -- --json
cp out.txt dry.sh
grep -q "^#!/bin/sh$" dry.sh || fail "dry run: not a script: $(cat dry.sh)"
grep -q "^sbatch --parsable --chdir=$WORK --time=02:00:00 --signal=B:USR1@120 .*--ntasks=4 .*$SRC/slurm/headfuse.sbatch $WORK/j.yaml --json$" dry.sh ||
  fail "dry run: sbatch line: $(cat dry.sh)"
grep -q "^#   srun --mpi=pmix --ntasks=4 --kill-on-bad-exit=1 $HEADFUSE run $WORK/j.yaml --json$" dry.sh ||
  fail "dry run: the step: $(cat dry.sh)"
grep -q "nothing submitted" err.txt && ! grep -q "submitted job" err.txt || fail "dry run: $(cat err.txt)"
grep -q "^job j: 2 entries -> j.h5$" err.txt || fail "dry run: the job was not checked: $(cat err.txt)"
sh -n dry.sh || fail "dry run: the script does not parse"
# the script, run with a stand-in sbatch, submits exactly that command
printf '#!/bin/sh\necho "$@" >>"%s/sbatch.log"; echo 42\n' "$WORK" >bin/sbatch
chmod +x bin/sbatch
"${nosl[@]}" sh dry.sh >/dev/null || fail "the dry-run script failed"
grep -q -- "--ntasks=4 .*headfuse.sbatch $WORK/j.yaml --json$" sbatch.log || fail "stand-in sbatch got: $(cat sbatch.log)"
rm bin/sbatch sbatch.log
run 0 "${nosl[@]}" "${submit[@]}" j.yaml --array --throttle 3 --dry-run
grep -q '^aid=$(sbatch --parsable .*--array=0-1%3 .*headfuse-array.sbatch '"$WORK"'/j.yaml)$' out.txt ||
  fail "dry run --array: $(cat out.txt)"
grep -q '^sbatch --parsable .*--ntasks=1 --job-name=headfuse-merge --dependency=afterok:"$aid" .*headfuse.sbatch '"$WORK"'/j.yaml$' out.txt ||
  fail "dry run --array: merge: $(cat out.txt)"
grep -q "^# array task I runs: .* run $WORK/j.yaml --entry I --resume$" out.txt || fail "dry run --array: $(cat out.txt)"
echo "ok: --dry-run without Slurm prints a script of sbatch commands and submits nothing"

# headfuse run options after --
run 0 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run -- --out other.h5 --quiet
grep -q "^job j: 2 entries -> other.h5$" err.txt || fail "-- --out: $(cat err.txt)"
for o in --entry --collect --list; do
  run 2 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run -- "$o"
  grep -q "^submit: -- $o: " err.txt || fail "-- $o: $(cat err.txt)"
done
run 2 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run -- --resume
grep -q "give --resume to submit itself" err.txt || fail "-- --resume: $(cat err.txt)"
run 2 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run -- --bogus
grep -q "^submit: -- --bogus: not an option slurm/submit passes to headfuse run" err.txt || fail "-- --bogus: $(cat err.txt)"
echo "ok: run options after -- passed on (--json, --out) or refused with a reason"

# an existing result: refused unless --resume or -- --force
touch j.h5
run 2 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run
grep -q "submit: $WORK/j.h5 exists: give --resume to keep its rows (only entries not in it run), or -- --force to overwrite it" err.txt ||
  fail "existing result: $(cat err.txt)"
run 0 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run --resume
grep -q "HF_RESUME=1" out.txt || fail "--resume: $(cat out.txt)"
run 0 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run -- --force
echo "ok: an existing result is refused at submission unless --resume or -- --force"

# options before the job file, as sbatch users type them, give the same script as after it
rm -f j.h5
run 0 "${nosl[@]}" "${submit[@]}" j.yaml --ntasks 64 --time 02:00:00 --dry-run -- --json
cp out.txt after.sh
run 0 "${nosl[@]}" "${submit[@]}" --ntasks 64 --time 02:00:00 --dry-run j.yaml -- --json
cmp -s out.txt after.sh || fail "options before the job file: $(diff after.sh out.txt)"
run 0 "${nosl[@]}" "${submit[@]}" --ntasks 64 j.yaml --time 02:00:00 --dry-run -- --json
cmp -s out.txt after.sh || fail "options around the job file: $(diff after.sh out.txt)"
grep -q -- "--ntasks=64 " after.sh || fail "--ntasks 64 lost: $(cat after.sh)"
run 2 "${nosl[@]}" "${submit[@]}" --ntasks 64 --dry-run
[ "$(cat err.txt)" = "submit: no job file given: slurm/submit [options] JOB.yaml [options] (see slurm/submit --help)" ] ||
  fail "no job file: $(cat err.txt)"
run 2 "${nosl[@]}" "${submit[@]}" j.yaml --dry-run j.yaml
grep -q "^submit: one job file only: j.yaml and j.yaml" err.txt || fail "two job files: $(cat err.txt)"
run 2 "${nosl[@]}" "${submit[@]}" --ntasks --dry-run j.yaml
[ "$(cat err.txt)" = "submit: --ntasks needs a value (see slurm/submit --help)" ] || fail "--ntasks --dry-run: $(cat err.txt)"
echo "ok: options before and after the job file"
