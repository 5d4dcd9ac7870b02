# The documentation names only what exists (issue 13, point 12): every command line in
# README.md and docs/*.md that runs headfuse (in a code block, `$ headfuse ...`,
# `mpirun -n N headfuse ...`, `build/headfuse ...`, with its continuation lines, or in
# inline code) uses an existing subcommand and only options that subcommand accepts
# (each is given to `headfuse CMD OPTION`, which must not answer "unknown option");
# `slurm/submit` and `tools/hf_plot.py` lines only options their --help lists. The
# `--list` transcript in docs/jobs.md is what the program prints. The checker itself
# must fail on a planted wrong page.
. "$HF_SOURCE_DIR/tests/lib.sh"

cat >check_docs.py <<'PY'
"""check_docs.py HEADFUSE SRC FILE.md...: exit 1 listing every command line that names a
missing subcommand or option."""
import re
import subprocess
import sys

HEADFUSE, SRC, files = sys.argv[1], sys.argv[2], sys.argv[3:]
SUBCOMMANDS = {"target", "check", "search", "run", "table", "verify", "approx"}
OPT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# a command line: what may come before `headfuse` (a launcher) and `headfuse` itself
HF = re.compile(r"^(?:\$ )?(?:(?:mpirun|srun|timeout)\b[^`|]*?\s)?(?:\S*/)?headfuse\s+(\S+)(.*)$")
OTHER = re.compile(r"^(?:\$ )?(?:\S*/)?(slurm/submit|tools/hf_plot\.py)\s+(.*)$")

cache = {}


def accepted(sub, opt):
    """Whether `headfuse SUB OPT` gets past the option parser."""
    if (sub, opt) not in cache:
        p = subprocess.run([HEADFUSE, sub, opt], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        cache[(sub, opt)] = "unknown option" not in p.stderr and "unknown command" not in p.stderr
    return cache[(sub, opt)]


helps = {}


def help_options(tool):
    if tool not in helps:
        cmd = [f"{SRC}/slurm/submit", "--help"] if tool == "slurm/submit" else \
            ["/usr/bin/python3", f"{SRC}/tools/hf_plot.py", "--help"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        helps[tool] = set(OPT.findall(p.stdout))
    return helps[tool]


def strip_comment(line):
    return re.split(r"\s#\s|\s{2,}#", line, maxsplit=1)[0]


def commands(path):
    """(line number, text) of every command line of a Markdown file."""
    out, in_code, last = [], False, None
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        if line.lstrip().startswith("```"):
            in_code, last = not in_code, None
            continue
        if in_code:
            text = strip_comment(line)
            if last is not None and re.match(r"^\s+[\[(-]", text):
                out[last] = (out[last][0], out[last][1] + " " + text.strip())  # continued
                continue
            last = None
            if HF.match(text.strip()) or OTHER.match(text.strip()):
                out.append((n, text.strip()))
                last = len(out) - 1
        else:
            for span in re.findall(r"`([^`]+)`", line):
                if HF.match(span) or OTHER.match(span):
                    out.append((n, span))
    return out


bad = []
checked = 0
for path in files:
    for n, text in commands(path):
        m = HF.match(text)
        if m:
            sub, rest = m.group(1), m.group(2)
            if sub in ("--help", "-h", "--version", "COMMAND", "CMD") or sub.endswith(":"):
                continue  # not a subcommand: a message quoted ("headfuse run: x.yaml:3: ...")
            if sub not in SUBCOMMANDS:
                bad.append(f"{path}:{n}: headfuse has no command '{sub}': {text}")
                continue
            for opt in OPT.findall(rest.split(" -- ")[0]):
                checked += 1
                if not accepted(sub, opt):
                    bad.append(f"{path}:{n}: headfuse {sub} has no option {opt}: {text}")
            continue
        m = OTHER.match(text)
        tool, rest = m.group(1), m.group(2)
        for opt in OPT.findall(rest.split(" -- ")[0]):
            checked += 1
            if opt not in help_options(tool):
                bad.append(f"{path}:{n}: {tool} has no option {opt} (its --help): {text}")
print(f"{checked} options on command lines of {len(files)} files checked")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# the checker catches a planted wrong page: an option and a command that do not exist
cat >planted.md <<'EOF'
```
mpirun -n 2 headfuse search --family wd:d=2 --span 2 --out r.h5
        [--quiet] [--no-such-option]
headfuse frobnicate R.h5
```
Also `headfuse table R.h5 --xml` and `slurm/submit JOB.yaml --nodez 2`.
EOF
run 1 $PY check_docs.py "$HEADFUSE" "$SRC" planted.md
for want in "headfuse search has no option --no-such-option" "headfuse has no command 'frobnicate'" \
  "headfuse table has no option --xml" "slurm/submit has no option --nodez"; do
  grep -q -- "$want" out.txt || fail "the checker missed: $want: $(cat out.txt)"
done
[ "$(grep -c "has no" out.txt)" = 4 ] || fail "the checker flagged more than was planted: $(cat out.txt)"
echo "ok: the checker fails on a planted wrong page"

# the real pages
run 0 $PY check_docs.py "$HEADFUSE" "$SRC" "$SRC/README.md" "$SRC"/docs/*.md
cat out.txt
n=$(sed -n 's/^\([0-9]*\) options.*/\1/p' out.txt)
[ "$n" -ge 100 ] || fail "only $n options found: the extractor lost the command lines"
echo "ok: every headfuse, slurm/submit and hf_plot command line in README.md and docs/*.md names existing options"

# docs/jobs.md's --list transcript is what the program prints
want=$(sed -n '/^\$ headfuse run jobs\/demo.yaml --list$/{n;p}' "$SRC/docs/jobs.md")
got=$(cd "$SRC" && "$HEADFUSE" run jobs/demo.yaml --list | head -1)
[ -n "$want" ] && [ "$want" = "$got" ] || fail "docs/jobs.md says '$want', headfuse run jobs/demo.yaml --list prints '$got'"
for i in 0 1 2; do
  line=$(cd "$SRC" && "$HEADFUSE" run jobs/demo.yaml --list | sed -n "$((i + 2))p")
  grep -qxF "$line" "$SRC/docs/jobs.md" || fail "docs/jobs.md lacks the --list line '$line'"
done
echo "ok: docs/jobs.md's --list transcript matches the program"

# docs/jobs.md's example job file is valid as written, from any directory
mkdir elsewhere
sed -n '/^```yaml$/,/^```$/p' "$SRC/docs/jobs.md" | sed '1d;$d' >elsewhere/example.yaml
[ -s elsewhere/example.yaml ] || fail "no yaml example in docs/jobs.md"
(cd elsewhere && run 0 "$HEADFUSE" run example.yaml --list)
grep -q "^job demo: 9 entries -> demo.h5$" elsewhere/out.txt || fail "docs/jobs.md example: $(cat elsewhere/out.txt elsewhere/err.txt)"
echo "ok: docs/jobs.md's example job file loads outside jobs/ (9 entries, as its comments count)"

# README's install command: `cmake --install build --prefix P` gives a working P/bin/headfuse
build=$(dirname "$HEADFUSE")
[ -f "$build/cmake_install.cmake" ] || fail "no cmake_install.cmake in $build"
cmake --install "$build" --prefix "$WORK/inst" >inst.log || fail "cmake --install: $(cat inst.log)"
run 0 "$WORK/inst/bin/headfuse" --version
grep -q "^headfuse " out.txt || fail "installed headfuse: $(cat out.txt)"
echo "ok: cmake --install --prefix puts a working bin/headfuse there"
