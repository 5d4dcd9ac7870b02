#!/usr/bin/env python3
"""The code's shape, checked (docs/architecture.md): the module layering (no include reaches
backwards along the line), engine codes only in the engines and their registry, the engines
asking to stop one way, one file for rename() and one for getenv(), no mutable test globals,
and the sizes (files, functions, cli).

Run from anywhere: python3 tests/python/test_code_shape.py. Exit 0 when every rule holds; each
broken rule is one line naming the file."""
import glob
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The line of docs/architecture.md: a module may include the headers of modules of a lower
# level, and its own; modules of one level are siblings and do not include each other.
LEVEL = {"core": 0, "target": 1, "algebra": 2, "exact": 3, "verify": 3, "bounds": 3,
         "symmetry": 3, "search": 4, "job": 5, "approx": 5, "sched": 6, "store": 7,
         "campaign": 8, "cli": 9}
# Each public header's module. A header not listed here fails the test: add it.
HEADER = {"agree.h": "core", "core.h": "core", "error.h": "core", "stop.h": "core",
          "control.h": "core", "durable.h": "core",
          "target.h": "target", "algebra.h": "algebra", "exact.h": "exact",
          "verify.h": "verify", "bounds.h": "bounds", "newton.h": "bounds",
          "faces3d.h": "bounds", "symmetry.h": "symmetry", "search.h": "search",
          "engine.h": "search", "job.h": "job", "approx.h": "approx", "sched.h": "sched",
          "store.h": "store", "approx_store.h": "store", "campaign.h": "campaign",
          "report.h": "campaign"}
# Narrower than the level allows: job knows the engines by name only (the registry).
ONLY = {"job": {"core", "target", "engine.h"}}

FILE_LINES_MAX = 1000
FUNC_LINES_MAX = 150
FUNCS_OVER_MAX = 2
CLI_LINES_MAX = 2000


def sources(patterns=("src/*/*.c", "src/*/*.h", "include/headfuse/*.h")):
    out = []
    for p in patterns:
        out += sorted(glob.glob(os.path.join(ROOT, p)))
    return out


def rel(path):
    return os.path.relpath(path, ROOT)


def module_of(path):
    r = rel(path).split(os.sep)
    if r[0] == "src":
        return r[1]
    return HEADER.get(r[-1])


def strip_comments(text):
    """C text without comments and string literals (kept as empty strings), lines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] in "\"'":  # a string or character literal, kept empty
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(quote + quote)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def layering_problems():
    bad = []
    for path in sources():
        mod = module_of(path)
        if mod is None:
            bad.append(f"{rel(path)}: a header of no module (add it to HEADER in {rel(__file__)})")
            continue
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', read(path), re.M):
            inc = m.group(1)
            name = os.path.basename(inc)
            if inc.startswith("headfuse/"):
                owner = HEADER.get(name)
                if owner is None:
                    bad.append(f"{rel(path)}: includes {inc}, a header of no module")
                    continue
                if owner == mod:
                    continue
                if LEVEL[owner] >= LEVEL[mod]:
                    bad.append(f"{rel(path)}: module {mod} includes {inc} of module {owner}, "
                               "which comes later along the line (or beside it)")
                only = ONLY.get(mod)
                if only is not None and owner not in only and name not in only:
                    bad.append(f"{rel(path)}: module {mod} includes {inc}; it may use only "
                               f"{', '.join(sorted(only))}")
            else:
                # a private header: its module's own directory only
                where = inc.split("/")[0] if "/" in inc else mod
                if where != mod:
                    bad.append(f"{rel(path)}: includes {inc}, private to module {where}")
    return bad


def functions(path):
    """(lines, name) of each function: from its first line at column 0 to its closing '}'."""
    lines = read(path).split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("{"):
            j = i - 1
            while j > 0 and lines[j][:1] in (" ", "\t"):
                j -= 1
            m = re.search(r"(\w+)\s*\(", lines[j])
            k = i
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            out.append((k - j + 1, m.group(1) if m else lines[j].strip()))
            i = k
        i += 1
    return out


def files_calling(fn):
    pat = re.compile(r"\b" + fn + r"\s*\(")
    return sorted(rel(p) for p in sources(("src/*/*.c", "src/*/*.h"))
                  if pat.search(strip_comments(read(p))))


def engine_table():
    """The engine codes and their ops tables, from HF_ENGINE_TABLE (engine.h)."""
    text = read(os.path.join(ROOT, "include/headfuse/engine.h"))
    rows = re.findall(r"X\((HF_ENGINE_\w+),\s*\"(\w+)\",\s*\d,\s*(hf_engine_\w+)", text)
    return rows


class CodeShape(unittest.TestCase):
    def test_layering(self):
        self.assertEqual(layering_problems(), [])

    def test_layering_catches_a_backward_include(self):
        # the check itself: a core header including the search's is reported
        global read
        real = read
        fake = os.path.join(ROOT, "include/headfuse/core.h")

        def read_planted(path):
            text = real(path)
            return text + '\n#include "headfuse/search.h"\n' if path == fake else text
        read = read_planted
        try:
            self.assertTrue(any("core.h: module core includes headfuse/search.h" in b
                                for b in layering_problems()))
        finally:
            read = real

    def test_file_sizes(self):
        big = [f"{rel(p)}: {n} lines" for p in sources(("src/*/*.c", "src/*/*.h"))
               for n in [read(p).count("\n")] if n > FILE_LINES_MAX]
        self.assertEqual(big, [], f"files over {FILE_LINES_MAX} lines")

    def test_long_functions(self):
        long_ = [f"{rel(p)}: {name} {n} lines" for p in sources(("src/*/*.c",))
                 for n, name in functions(p) if n > FUNC_LINES_MAX]
        self.assertLessEqual(len(long_), FUNCS_OVER_MAX,
                             f"functions over {FUNC_LINES_MAX} lines: {long_}")

    def test_cli_size(self):
        n = sum(read(p).count("\n") for p in glob.glob(os.path.join(ROOT, "src/cli/*")))
        self.assertLess(n, CLI_LINES_MAX, "src/cli lines")

    def test_one_rename_one_getenv(self):
        for fn in ("rename", "getenv"):
            where = files_calling(fn)
            self.assertLessEqual(len(where), 1, f"{fn}() in more than one file: {where}")

    def test_engines_ask_to_stop_one_way(self):
        # in src/search only hf_search_stop_asked (search_impl.h) calls a poll hook or
        # core's stop check: no hf_stop_check, no HF_STOP_EVERY, no hook called on its
        # context (`poll(poll_ctx)`, `run->poll(run->poll_ctx)`, `deal_poll(...poll_ctx)`)
        pats = [re.compile(r"\bhf_stop_check\s*\("), re.compile(r"\bHF_STOP_EVERY\s*\("),
                re.compile(r"poll\s*\(\s*[\w>.\-]*poll_ctx\s*\)")]
        bad = []
        for p in sources(("src/search/*.c", "src/search/*.h")):
            text = strip_comments(read(p))
            if rel(p) == "src/search/search_impl.h":
                text = re.sub(r"static inline int hf_search_stop_asked\(.*?\n}\n", "", text,
                              flags=re.S)
            bad += [f"{rel(p)}: {m.group(0)}" for pat in pats for m in pat.finditer(text)]
        self.assertEqual(bad, [], "stop asked other than through hf_search_stop_asked")

    def test_engine_codes_in_engines_and_registry(self):
        rows = engine_table()
        self.assertGreaterEqual(len(rows), 2, "HF_ENGINE_TABLE not found in engine.h")
        allowed = {"include/headfuse/engine.h", "src/search/registry.c"}
        stems = [ops[len("hf_engine_"):] for _, _, ops in rows]
        codes = re.compile(r"\b(" + "|".join(code for code, _, _ in rows) + r")\b")
        bad = []
        for p in sources() + sorted(glob.glob(os.path.join(ROOT, "fuzz/*.c"))):
            r = rel(p)
            base = os.path.basename(r)
            if r in allowed or (r.startswith("src/search/") and
                                any(base.startswith(s) for s in stems)):
                continue
            if codes.search(strip_comments(read(p))):
                bad.append(r)
        self.assertEqual(bad, [], "engine codes outside the engines and their registry")

    def test_no_mutable_globals(self):
        bad = []
        for p in sources():
            text = strip_comments(read(p))
            for m in re.finditer(r"^extern\s+([^;(]*);", text, re.M):
                decl = m.group(1)
                # libhdf5's own flag; PETSc's log events (registered once, PETSc's idiom)
                if "const" in decl.split() or "H5_libinit_g" in decl or "PetscLogEvent" in decl:
                    continue
                bad.append(f"{rel(p)}: extern {decl}")
            if not p.endswith(".c"):
                continue
            # a definition at file scope that is neither static nor const: a mutable global
            for m in re.finditer(r"^(?!static\b|extern\b|typedef\b|const\b|struct\b|union\b|"
                                 r"enum\b|return\b|__extension__)[A-Za-z_][\w \t*]*?\b(\w+)\s*(\[[^]]*\])?\s*(=[^=]|;)",
                                 text, re.M):
                bad.append(f"{rel(p)}: global {m.group(1)}")
        self.assertEqual(bad, [], "mutable globals (test knobs belong to control.h):\n" + "\n".join(bad))


if __name__ == "__main__":
    unittest.main(verbosity=2)
