# No source cites a document or a section that the repository does not have (issue 23,
# point 4). Citations take one of the forms docs/math.md states ("How to cite"):
#   docs/NAME.md §N.M  (several: docs/NAME.md §5.1, §5.2): NAME.md has a heading numbered N.M
#   docs/NAME.md, "Heading": NAME.md has a heading that begins with these words
#   docs/NAME.md: the page exists
# A bare §N.M inside docs/NAME.md means that page's own section; elsewhere it is refused
# (name the page). "Theorem 5.1" and the like must name a statement of docs/math.md with
# that kind and number. Any citation of MATH.md (the project's notes, not in the
# repository), a path outside the repository, or a section in another form
# ("docs/x.md section 3", "docs/x.md 6a", 'docs/x.md ("Heading")') is refused. The
# checker names file:line for each, and must fail on planted wrong citations.
. "$HF_SOURCE_DIR/tests/lib.sh"

cat >check_citations.py <<'PY'
"""check_citations.py ROOT: exit 1 listing file:line of every citation in ROOT's sources
that names a missing page, section, heading or statement, or cites in a refused form."""
import os
import re
import sys

ROOT = sys.argv[1]
SELF = "tests/cli/doc_citations.sh"  # holds the refused forms as examples
DIRS = ["src", "include", "tests", "bench", "tools", "scripts", "fuzz", "slurm", "jobs", "docs"]
FILES = ["README.md", "CMakeLists.txt"]
TEXT_EXT = {".c", ".h", ".py", ".sh", ".md", ".txt", ".cmake", ".yaml", ".yml", ".sbatch"}
KINDS = "Theorem|Lemma|Corollary|Proposition|Definition|Example|Conjecture"

DOC = re.compile(r"docs/([A-Za-z0-9_-]+\.md)")
GAP = r"(?:\s|\*(?!/)|#|//)*"  # blanks, and the comment leaders of a continued line
SEC = re.compile(r"§\s?(\d+[a-z]?(?:\.\d+)*)")
MORE_SEC = re.compile(GAP + r"(?:,|and|or)" + GAP + r"§\s?(\d+[a-z]?(?:\.\d+)*)")
HEADING_CITE = re.compile(r"\s*," + GAP + r'"((?:[^"\\]|\n)*?)"')
BAD_FORMS = [
    (re.compile(r'\s*\(\s*"|\s+"'), 'cite a heading as docs/{0}, "Heading"'),
    (re.compile(r"[ ,]*(?:sections?|sec\.)\s*\d"), "cite a numbered section as docs/{0} §N"),
    (re.compile(r"\s+\d"), "cite a numbered section as docs/{0} §N"),
    (re.compile(r",\s*(?:rule|Rule|claim|Claim)\s+\d"), 'cite a heading as docs/{0}, "Heading"'),
]
MATH = re.compile(r"MATH\.md|\bMATH\b(?=\s*(?:§|\d|sections?\b))")
OUTSIDE = re.compile(r"(?:\.\./)+[\w./-]*\.md")
STATEMENT = re.compile(r"\b(" + KINDS + r")\s+(\d+\.\d+)\b")
CONTINUATION = re.compile(r"\s*\n\s*(?:\*|#|//)?\s*")


def sources(root):
    """Relative paths of the text files to scan."""
    out = [f for f in FILES if os.path.isfile(os.path.join(root, f))]
    for d in DIRS:
        for base, dirs, files in os.walk(os.path.join(root, d)):
            dirs[:] = sorted(x for x in dirs if not x.startswith((".", "build")))
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(base, f), root)
                ext = os.path.splitext(f)[1]
                if rel == SELF:
                    continue
                if ext in TEXT_EXT or (ext == "" and d in ("scripts", "slurm")):
                    out.append(rel)
    return out


def read(root, rel):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            return fh.read()
    except (UnicodeDecodeError, OSError):
        return None


def norm(s):
    return " ".join(s.replace("`", "").split())


def headings(text):
    """(numbers, titles) of a Markdown page's headings, outside code blocks."""
    nums, titles, fence = set(), [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if m:
            title = norm(m.group(1))
            titles.append(title)
            n = re.match(r"^(\d+[a-z]?(?:\.\d+)*)\.?(?=\s|$)", title)
            if n:
                nums.add(n.group(1))
    return nums, titles


def statements(text):
    """{number: kind} of docs/math.md's numbered statements, and problems with them."""
    found, problems, current = {}, [], None
    for n, line in enumerate(text.splitlines(), 1):
        h = re.match(r"^###\s+(\d+\.\d+)\s", line)
        if h:
            current = h.group(1)
        for m in re.finditer(r"\*\*(" + KINDS + r") (\d+\.\d+)\b", line):
            kind, num = m.groups()
            if num in found:
                problems.append((n, f"{kind} {num} is numbered twice"))
            if num != current:
                problems.append((n, f"{kind} {num} sits in §{current}, not in §{num}"))
            found[num] = kind
    return found, problems


class Docs:
    def __init__(self, root):
        self.root, self.cache = root, {}

    def page(self, name):
        if name not in self.cache:
            text = read(self.root, os.path.join("docs", name))
            self.cache[name] = None if text is None else headings(text)
        return self.cache[name]


def check_file(root, rel, text, docs, stmts):
    bad = []
    own = os.path.basename(rel) if rel.startswith("docs/") and rel.endswith(".md") else None

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    def report(pos, msg):
        bad.append(f"{rel}:{line_of(pos)}: {msg}")

    def section(pos, page, num):
        p = docs.page(page)
        if p is not None and num not in p[0]:
            report(pos, f"docs/{page} has no section §{num}")

    used = set()  # positions of § signs already checked as part of a citation
    for m in DOC.finditer(text):
        page, end = m.group(1), m.end()
        p = docs.page(page)
        if p is None:
            report(m.start(), f"docs/{page} does not exist")
            continue
        rest = text[end:end + 400]
        h = HEADING_CITE.match(rest)
        if h:
            cited = norm(CONTINUATION.sub(" ", h.group(1)))
            ok = any(t.startswith(cited) and (len(t) == len(cited) or not t[len(cited)].isalnum())
                     for t in p[1])
            if not ok:
                report(m.start(), f'docs/{page} has no heading "{cited}"')
            continue
        s = re.match(GAP + r"(?=§)", rest)
        if s:
            sm = SEC.match(text, end + s.end())
            if sm:
                used.add(sm.start())
                section(sm.start(), page, sm.group(1))
                nxt = sm.end()
                while True:  # a list: docs/math.md §5.1, §5.2 and §5.3
                    mm = MORE_SEC.match(text, nxt)
                    if not mm:
                        break
                    at = text.index("§", mm.start())
                    used.add(at)
                    section(at, page, mm.group(1))
                    nxt = mm.end()
                continue
        for form, msg in BAD_FORMS:
            if form.match(rest):
                report(m.start(), msg.format(page))
                break
    for m in SEC.finditer(text):
        if m.start() in used:
            continue
        if own:
            section(m.start(), own, m.group(1))
        else:
            report(m.start(), f"§{m.group(1)}: name the page (docs/math.md §{m.group(1)})")
    for m in MATH.finditer(text):
        report(m.start(), "cites MATH.md, which is not in the repository: cite docs/math.md §N.M")
    for m in OUTSIDE.finditer(text):
        report(m.start(), f"{m.group(0)} is outside the repository")
    for m in STATEMENT.finditer(text):
        kind, num = m.groups()
        if stmts.get(num) != kind:
            have = f" (§{num} holds {stmts[num]} {num})" if num in stmts else ""
            report(m.start(), f"docs/math.md has no {kind} {num}{have}")
    return bad


def main():
    docs = Docs(ROOT)
    math = read(ROOT, "docs/math.md") or ""
    stmts, problems = statements(math)
    bad = [f"docs/math.md:{n}: {msg}" for n, msg in problems]
    files = sources(ROOT)
    for rel in files:
        text = read(ROOT, rel)
        if text is not None:
            found = check_file(ROOT, rel, text, docs, stmts)
            bad += sorted(found, key=lambda b: int(b.split(":")[1]))
    print(f"{len(files)} files checked, {len(stmts)} numbered statements in docs/math.md")
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


main()
PY

# the checker catches planted wrong citations, each at its line, and nothing else
mkdir -p planted/docs planted/src planted/include
cp "$SRC"/docs/*.md planted/docs/
cat >planted/src/wrong.c <<'EOF'
/* the face rule (docs/math.md §4.2) and the vertex bound (docs/math.md §5.2, §5.3) */
/* a section that does not exist: docs/math.md §4.9 */
/* a second in a list: docs/math.md §5.1, §5.99 */
/* a heading that does not exist: docs/search.md, "The cone engine" */
/* a page that does not exist: docs/nosuch.md */
/* the old notes: MATH.md 7.7 */
/* the old notes, short: MATH 7.3 */
/* a bare section: by §4.2 */
/* a section in another form: docs/search.md section 3 */
/* a heading in another form: docs/search.md ("Shape rules") */
/* a statement that is not there: Lemma 4.2 */
/* a heading across lines (docs/search.md, "Shape
 * rules") and Lemma 9.1 */
EOF
cat >planted/include/wrong.h <<'EOF'
/* outside the repository: ../shared/STYLE.md */
EOF
run 1 $PY check_citations.py planted
cat out.txt
for want in "src/wrong.c:2: docs/math.md has no section §4.9" \
  "src/wrong.c:3: docs/math.md has no section §5.99" \
  'src/wrong.c:4: docs/search.md has no heading "The cone engine"' \
  "src/wrong.c:5: docs/nosuch.md does not exist" \
  "src/wrong.c:6: cites MATH.md" "src/wrong.c:7: cites MATH.md" \
  "src/wrong.c:8: §4.2: name the page" \
  "src/wrong.c:9: cite a numbered section as docs/search.md §N" \
  'src/wrong.c:10: cite a heading as docs/search.md, "Heading"' \
  "src/wrong.c:11: docs/math.md has no Lemma 4.2 (§4.2 holds Theorem 4.2)" \
  "include/wrong.h:1: ../shared/STYLE.md is outside the repository"; do
  grep -qF -- "$want" out.txt || fail "the checker missed: $want"
done
[ "$(grep -c ': ' out.txt)" = 11 ] || fail "the checker flagged more or less than was planted: $(cat out.txt)"
echo "ok: the checker names every planted wrong citation at its line"

# a statement numbered in the wrong section of docs/math.md is refused too
sed -i 's/^\*\*Theorem 5\.2 (vertex bound)/**Theorem 5.9 (vertex bound)/' planted/docs/math.md
rm planted/src/wrong.c planted/include/wrong.h
run 1 $PY check_citations.py planted
grep -qF "docs/math.md:" out.txt && grep -qF "Theorem 5.9 sits in §5.2" out.txt ||
  fail "the checker missed a misnumbered statement: $(cat out.txt)"
echo "ok: a statement outside its own section is refused"

# the real tree
run 0 $PY check_citations.py "$SRC"
cat out.txt
n=$(sed -n 's/^\([0-9]*\) files checked.*/\1/p' out.txt)
[ "$n" -ge 200 ] || fail "only $n files scanned: the walk lost the sources"
echo "ok: every citation in the sources names a page, section, heading or statement that exists"
