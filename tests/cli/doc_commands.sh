# The documentation names only what exists (issue 13, point 12): every command line in
# README.md and docs/*.md that runs headfuse (in a code block, `$ headfuse ...`,
# `mpirun -n N headfuse ...`, `build/headfuse ...`, with its continuation lines, or in
# inline code) uses an existing subcommand and only options that subcommand accepts
# (each is given to `headfuse CMD OPTION`, which must not answer "unknown option");
# `slurm/submit` and `tools/hf_plot.py` lines only options their --help lists. Every
# transcript marked runnable (a ```console block) prints what the page shows (issue 24,
# point 4), and writes nothing into the source tree. Each checker must fail on a planted
# wrong page.
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
        rest = re.sub(r"--sbatch[ =]\S+", "--sbatch", rest)  # its value is sbatch's option
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

# Transcripts marked runnable (a ```console block: `$ COMMAND` lines, each followed by
# the output it shows) are run, and what the program prints (stdout and stderr, as a
# terminal shows them) must be what the page shows: line by line, where a line "..."
# stands for any lines and "..." inside a line for any text. The commands of one page run
# in turn in one scratch directory that has the source tree's jobs/, data/, tools/ and
# slurm/ and build/headfuse, so that pages can use the paths a user types in a checkout.
cat >run_docs.py <<'PY'
"""run_docs.py DIR FILE.md...: run the ```console transcripts of each page in DIR (one
page after the other, commands in order) and compare; exit 1 listing every mismatch."""
import os
import re
import subprocess
import sys

workdir, files = sys.argv[1], sys.argv[2:]


def transcripts(path):
    """[(line number, command, [expected lines])] of the page's console blocks."""
    out, block = [], None
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        if block is None:
            if line.strip() == "```console":
                block = []
            continue
        if line.strip() == "```":
            out += block
            block = None
        elif line.startswith("$ "):
            block.append((n, line[2:], []))
        elif block:
            block[-1][2].append(line)
    return out


def pattern(expected):
    """The expected lines as one regular expression over the printed text."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.rstrip().split("...")) + r"\n")
    return re.compile("".join(parts))


def first_difference(expected, printed):
    """The first expected line without a match, for the message."""
    got = printed.splitlines()
    i = 0
    for line in expected:
        if line.strip() == "...":
            return None  # after a gap the exact spot is not well defined
        rx = re.compile(".*?".join(re.escape(p) for p in line.rstrip().split("...")) + "$")
        if i >= len(got) or not rx.match(got[i]):
            return line, got[i] if i < len(got) else "(nothing more)"
        i += 1
    return "(the page shows no more)", got[i] if i < len(got) else ""


bad, ran = [], 0
for path in files:
    for n, cmd, expected in transcripts(path):
        ran += 1
        try:
            # one pipe for both, so their lines come in the order a terminal shows them
            p = subprocess.run(["bash", "-c", cmd], cwd=workdir, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600,
                               stdin=subprocess.DEVNULL)
            printed = p.stdout
        except subprocess.TimeoutExpired:
            bad.append(f"{path}:{n}: `{cmd}` did not finish in 600 s")
            continue
        printed = "".join(l.rstrip() + "\n" for l in printed.splitlines())
        if not pattern(expected).fullmatch(printed):
            d = first_difference(expected, printed)
            where = f": the page shows '{d[0]}', the program prints '{d[1]}'" if d else ""
            bad.append(f"{path}:{n}: `{cmd}`: the output differs from the page{where}\n"
                       + "".join(f"    | {l}\n" for l in printed.splitlines()[:40]))
print(f"{ran} commands of console transcripts in {len(files)} files run")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# a scratch checkout: the paths a page uses, none of them writable into the source tree
mkdir docrun
for d in jobs data tools slurm; do ln -s "$SRC/$d" "docrun/$d"; done
mkdir docrun/build
ln -s "$HEADFUSE" docrun/build/headfuse
export PATH="$(dirname "$HEADFUSE"):$PATH" HF_HEADFUSE=$HEADFUSE

# the runner catches a planted wrong transcript, and takes a right one with its gaps
mkdir plantrun
cp -r docrun/. plantrun/
cat >planted-run.md <<'EOF'
```console
$ headfuse target --family wd:d=2
target      wd:d=2  (d = 2, dv = 1, 2 heads, 4 head-atom terms)
lower bound 4  (face rule)
...
$ headfuse check --family wd:d=1 --keys "0;2"
...
feasible  no  (...)
```
EOF
cat >right-run.md <<'EOF'
```console
$ headfuse target --family wd:d=2
target      wd:d=2  (d = 2, dv = 1, 2 heads, 4 head-atom terms)
lower bound 4  (vertices of the Newton polytope ...)
...
$ headfuse check --family wd:d=1 --keys "0;2"
...
feasible  no  (...)
```
EOF
run 1 $PY run_docs.py plantrun planted-run.md
grep -q "planted-run.md:2: \`headfuse target --family wd:d=2\`: the output differs from the page: the page shows 'lower bound 4  (face rule)'" out.txt ||
  fail "the runner missed the planted transcript: $(cat out.txt)"
[ "$(grep -c "differs" out.txt)" = 1 ] || fail "the runner flagged more than was planted: $(cat out.txt)"
run 0 $PY run_docs.py plantrun right-run.md
grep -q "^2 commands of console transcripts in 1 files run$" out.txt || fail "right transcript: $(cat out.txt)"
echo "ok: the transcript runner fails on a planted wrong transcript and passes a right one"

# the real pages: every transcript marked runnable prints what it shows
touch started
sleep 1
run 0 $PY run_docs.py docrun "$SRC/README.md" "$SRC"/docs/*.md
cat out.txt
n=$(sed -n 's/^\([0-9]*\) commands of console.*/\1/p' out.txt)
[ "$n" -ge 8 ] || fail "only $n commands in console transcripts: the runnable blocks were lost"
echo "ok: the console transcripts of README.md and docs/*.md print what they show"
# ... and wrote nothing into the source tree (the pages write under scratch/ or their
# own directory, never next to the sources)
written=$(find "$SRC" \( -path "$SRC/build*" -o -path "$SRC/.git" \) -prune -o -newer started -print)
[ -z "$written" ] || fail "the transcripts wrote into the source tree: $written"
