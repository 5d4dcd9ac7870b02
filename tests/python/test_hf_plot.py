#!/usr/bin/python3
"""Tests of tools/hf_plot.py (issue 13, point 10 and the -o part of point 1; issue 24,
point 1): rows with no support in their span are drawn (a hollow diamond at LB with a
note), a bound equal to m* stays visible next to the m* marker; the figures of the demo
table and of a table up to d = 64, checked by their objects (check_figure: every row's
marker, none drawn inside another, one colour per span in every figure, 2^k labels apart
and clear of the axis titles, a legend naming everything); and the
-o path is checked before any work (an existing PNG kept unless --force, a bad directory
a message with exit status 2, a failed write a message with status 4; never a
traceback). unittest, so `python3 -m pytest tests/python` runs them too; CTest runs
`python3 tests/python/test_hf_plot.py` (test py.hf_plot)."""
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "tools", "hf_plot.py")
sys.path.insert(0, os.path.dirname(TOOL))
import hf_plot  # noqa: E402


def row(name, d, span, m_star, lb, ub, status, head_atoms=None):
    """A row as hf_plot.read_rows returns it."""
    return {"name": name, "d": d, "span": span, "m_star": m_star, "lb": lb, "ub": ub,
            "status": status, "engine": "layered", "max_atoms": 0, "n_min_raw": None,
            "n_min_sym": None, "group_order": None, "nodes": 0, "units": 0, "seconds": 0.0,
            "head_atoms": head_atoms, "family": name.split(":")[0], "file": "x.h5"}


# chain: d = 2 found m* = 7 = UB at span 2; d = 3 has no support in span 2 (infeasible)
ROWS = [row("chain:d=2", 2, 2, 7, 4, 7, "exhaustive", 6),
        row("chain:d=3", 3, 2, None, 8, 24, "infeasible", 10),
        row("wd:d=2", 2, 1, 4, 4, 4, "certified", 4),
        row("wd:d=3", 3, 1, 8, 8, 8, "certified", 6)]


def artists(fig, gid):
    return [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == gid]


def centre_px(line, i=0):
    """Display position of point i of a Line2D, through its own transform."""
    x, y = line.get_xdata()[i], line.get_ydata()[i]
    return line.get_transform().transform((x, y))


class Figure(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fig = hf_plot.build_figure(ROWS)
        cls.fig.canvas.draw()

    @classmethod
    def tearDownClass(cls):
        import matplotlib.pyplot as plt
        plt.close(cls.fig)

    def test_infeasible_row_drawn_hollow_at_lb_with_note(self):
        marks = artists(self.fig, "infeasible")
        self.assertEqual(len(marks), 1, "one marker for the one infeasible row")
        m = marks[0]
        self.assertEqual(m.get_xdata()[0], 3)  # at d = 3 (its slot beside is in points)
        self.assertEqual(m.get_ydata()[0], 8)  # at LB
        self.assertEqual(m.get_marker(), "D")
        self.assertEqual(m.get_markerfacecolor(), "white")
        notes = artists(self.fig, "infeasible-note")
        self.assertEqual([n.get_text() for n in notes], ["none in span 2"])
        legend = [t.get_text() for t in self.fig.legends[0].get_texts()]
        self.assertIn(hf_plot.STATUS_MARKERS["infeasible"][1], legend)

    def test_bound_equal_to_mstar_stays_visible(self):
        # chain d = 2: UB = m* = 7; the UB marker sits left of the m* marker, clear of it
        ub = [a for a in artists(self.fig, "ub") if list(a.get_ydata()) == [7]][0]
        ms = [a for a in artists(self.fig, "mstar") if a.get_ydata()[0] == 7][0]
        (ux, uy), (mx, my) = centre_px(ub), centre_px(ms)
        self.assertAlmostEqual(uy, my, delta=0.5)
        half = (ub.get_markersize() + ms.get_markersize()) / 2 * self.fig.dpi / 72
        self.assertGreater(mx - ux, half)
        self.assertLess(ub.get_markersize(), ms.get_markersize())
        # LB = m* (wd rows): on the other side
        wd = [ax for ax in self.fig.axes if ax.get_title() == "wd"][0]
        lb = [a for a in wd.get_lines() if a.get_gid() == "lb" and list(a.get_ydata()) == [4]][0]
        wd4 = [a for a in wd.get_lines() if a.get_gid() == "mstar" and a.get_ydata()[0] == 4][0]
        self.assertGreater(centre_px(lb)[0] - centre_px(wd4)[0], 0)

    def test_short_axis_labels_its_integers(self):
        # chain d = 2 alone (4..7): 2^2 and 2^3, and every integer between them
        import matplotlib.pyplot as plt
        fig = hf_plot.build_figure(ROWS[:1])
        fig.canvas.draw()
        ax = fig.axes[0]
        self.assertEqual([t.get_text() for t in ax.get_yticklabels() if t.get_text()],
                         ["$2^{2}$", "$2^{3}$"])
        self.assertEqual([t.get_text() for t in ax.yaxis.get_minorticklabels() if t.get_text()],
                         ["5", "6", "7"])
        check_figure(self, fig, ROWS[:1])
        plt.close(fig)

    def test_lone_d_head_atoms_is_a_level_not_a_stroke(self):
        # one d in a panel: the head-atom terms are a faint line across the whole panel,
        # not a short stroke at the d that reads like an error bar
        import matplotlib.pyplot as plt
        fig = hf_plot.build_figure(ROWS[:1])
        fig.canvas.draw()
        ax = fig.axes[0]
        level = [a for a in ax.get_lines() if a.get_gid() == "head_atoms-level"]
        self.assertEqual(len(level), 1)
        self.assertEqual(list(level[0].get_xdata()), [0, 1])  # axes coordinates: edge to edge
        self.assertEqual([a for a in ax.get_lines() if a.get_gid() == "head_atoms-stroke"], [])
        plt.close(fig)

    def test_the_figure_of_these_rows(self):
        check_figure(self, self.fig, ROWS)


# The demo table (jobs/demo.yaml as `headfuse run` writes it) and a table up to large d:
# (name, d, span, m*, LB, UB, status, head-atom terms)
DEMO = [("wd:d=1", 1, 1, 2, 2, 2, "certified", 2), ("wd:d=1", 1, 2, 2, 2, 2, "certified", 2),
        ("wd:d=2", 2, 1, 4, 4, 4, "certified", 4), ("wd:d=2", 2, 2, 4, 4, 4, "certified", 4),
        ("wd:d=3", 3, 1, 8, 8, 8, "certified", 6), ("wd:d=3", 3, 2, 8, 8, 8, "certified", 6),
        ("wd:d=4", 4, 2, 16, 16, 16, "certified", 8), ("wd:d=5", 5, 2, 32, 32, 32, "certified", 10),
        ("chain:d=2", 2, 2, 7, 7, 7, "certified", 6), ("chain:d=2", 2, 3, 7, 7, 7, "certified", 6),
        ("multi:d=2,k=3", 2, 2, 9, 4, 9, "exhaustive", 6),
        ("multi:d=3,k=3", 3, 2, 27, 8, 27, "exhaustive", 9),
        ("wdw:d=2", 2, 1, 4, 4, 4, "certified", 4), ("wdw:d=2", 2, 2, 4, 4, 4, "certified", 4),
        ("wdw:d=3", 3, 1, 8, 8, 8, "certified", 6), ("wdw:d=3", 3, 2, 8, 8, 8, "certified", 6),
        ("two_heads_shared", 2, 2, 5, 4, 5, "exhaustive", 5),
        ("cubic_factor", 1, 3, 3, 2, 3, "exhaustive", 3),
        ("wd:d=3", 3, 2, 8, 8, 8, "certified", 6)]  # the plain engine's cross-check: a twin row
CHAIN = {3: (24, 18), 4: (82, 54), 5: (280, 162), 6: (956, 486), 7: (3264, 1458),
         8: (11144, 4374), 9: (38048, 13122), 10: (129904, 39366)}
DEMO += [(f"chain:d={d}", d, 3, m, lb, m, "exhaustive", 4 * d - 2) for d, (m, lb) in CHAIN.items()
         if d <= 8]
DEMO += [(f"multi:d={d},k=3", d, 2, 3 ** d, 2 ** d, 3 ** d, "exhaustive", 3 * d) for d in range(4, 10)]
LARGE = [(f"wd:d={d}", d, s, 2 ** d, 2 ** d, 2 ** d, "certified", 2 * d)
         for d in range(1, 7) for s in (1, 2)]
LARGE += [(f"wd:d={d}", d, 1, 2 ** d, 2 ** d, 2 ** d, "certified", 2 * d) for d in (8, 16, 24, 32, 64)]
LARGE += [(f"chain:d={d}", d, 3, m, lb, m, "exhaustive", 4 * d - 2) for d, (m, lb) in CHAIN.items()]
LARGE += [("chain:d=3", 3, 2, None, 18, 24, "infeasible", 10),
          ("chain:d=2", 2, 2, None, 6, 7, "open", 6)]
LARGE += [(f"multi:d={d},k=3", d, 2, 3 ** d, 2 ** d, 3 ** d, "exhaustive", 3 * d) for d in range(4, 12)]
LARGE += [("wdw:d=2", 2, 1, 4, 4, 4, "certified", 4), ("wdw:d=3", 3, 2, 8, 8, 8, "certified", 6)]


def table_rows(table):
    return [row(*t[:7], head_atoms=t[7]) for t in table]


def boxes(fig, ax):
    """Every marker of a panel as (what, d, x0, y0, x1, y1) in display pixels: its centre
    through its own transform, its size from the marker size (and edge width)."""
    out = []
    for a in ax.get_lines():
        if a.get_gid() not in ("mstar", "infeasible", "ub", "lb", "head_atoms") or a.get_marker() in (None, "None", ""):
            continue
        half = (a.get_markersize() + a.get_markeredgewidth()) * fig.dpi / 72 / 2
        for i in range(len(a.get_xdata())):
            x, y = centre_px(a, i)
            out.append((a.get_gid(), a.get_xdata()[i], x - half, y - half, x + half, y + half))
    return out


def inside(a, b):
    """Box a drawn fully inside box b."""
    return b[2] <= a[2] and a[4] <= b[4] and b[3] <= a[3] and a[5] <= b[5]


def overlap(a, b):
    return a[2] < b[4] and b[2] < a[4] and a[3] < b[5] and b[3] < a[5]


def marker_colour(m):
    """The colour that says a marker's span: its face, or its edge when hollow."""
    import matplotlib.colors as mc
    face = m.get_markerfacecolor()
    return mc.to_hex(m.get_markeredgecolor() if mc.to_hex(face) == "#ffffff" else face)


def check_figure(test, fig, rows):
    """What a reader needs from the figure of rows: every row's marker at its (d, y); the
    bounds of every d; no marker drawn fully inside another, none of one d overlapping
    another; one fixed colour per span; a legend naming every mark, status and span; 2^k
    labels that keep apart and stay clear of the axis titles."""
    import matplotlib.colors as mc
    fig.canvas.draw()
    # every row: one marker at its d and value, in its span's colour
    marks = [a for ax in fig.axes for a in ax.get_lines() if a.get_gid() in ("mstar", "infeasible")]
    test.assertEqual(len(marks), len(rows), "one marker per row")
    left = list(marks)  # each marker stands for one row: matched once
    for r in rows:
        want = hf_plot.row_y(r)
        mine = [m for m in left if m.hf_row == (r["name"], r["span"]) and m.hf_point[1] == want
                and m.get_marker() == hf_plot.STATUS_MARKERS[r["status"]][0]]
        test.assertTrue(mine, f"no marker for {r['name']} span {r['span']} [{r['status']}] at {want}")
        m = mine[0]
        left.remove(m)
        test.assertEqual((m.get_xdata()[0], m.get_ydata()[0]), (r["d"], want))
        test.assertEqual(marker_colour(m), mc.to_hex(hf_plot.span_colour(r["span"])))
    for ax in fig.axes:
        if not ax.get_lines():
            continue
        fam = ax.get_title().split(" (")[0]
        fr = [r for r in rows if r["family"] == fam]
        # the bounds of every d: on their lines, and as markers unless the line runs
        # through an m* marker of the same value
        for key in ("ub", "lb"):
            line = [a for a in ax.get_lines() if a.get_gid() == key + "-line"][0]
            pts = set(zip(line.get_xdata(), line.get_ydata()))
            mk = {(a.get_xdata()[0], a.get_ydata()[0]) for a in ax.get_lines() if a.get_gid() == key}
            for r in fr:
                at_d = [hf_plot.log2_safe(q[key]) for q in fr if q["d"] == r["d"]]
                p = (r["d"], max(at_d) if key == "lb" else min(at_d))
                test.assertIn(p, pts, f"{key} of {r['name']} not on its line")
                if p not in mk:
                    test.assertTrue(any(hf_plot.row_y(q) == p[1] for q in fr if q["d"] == r["d"]),
                                    f"{key} marker of {r['name']} missing")
        # no marker fully inside another; at one d none overlaps another; all inside the axes
        bx = boxes(fig, ax)
        frame = ax.get_window_extent()
        for i, a in enumerate(bx):
            test.assertTrue(frame.x0 - 1 <= a[2] and a[4] <= frame.x1 + 1 and
                            frame.y0 - 1 <= a[3] and a[5] <= frame.y1 + 1, f"{fam}: {a} clipped")
            for b in bx[i + 1:]:
                test.assertFalse(inside(a, b) or inside(b, a), f"{fam}: {a} and {b}")
                if a[1] == b[1] and "head_atoms" not in (a[0], b[0]):
                    test.assertFalse(overlap(a, b), f"{fam}: {a} overlaps {b} at d = {a[1]}")
        # y labels: 2^k (and, on a short axis, the integers between), apart, clear of
        # the axis title, which stays clear of the other panels
        labels = [t for t in ax.get_yticklabels() if t.get_text()]
        test.assertGreaterEqual(len(labels), 2)
        for t in labels:
            test.assertRegex(t.get_text(), r"^\$2\^\{\d+\}\$$")
        minor = [t for t in ax.yaxis.get_minorticklabels() if t.get_text()]
        for t in minor:
            test.assertRegex(t.get_text(), r"^\d+$")
        if minor:  # every integer between the powers: none odd out
            got = sorted(int(t.get_text()) for t in minor)
            test.assertEqual(got, [v for v in range(got[0], got[-1] + 1) if v & (v - 1)])
        ext = [t.get_window_extent() for t in labels + minor]
        ext.sort(key=lambda e: e.y0)
        for e, f in zip(ext, ext[1:]):
            test.assertLessEqual(e.y1, f.y0 + 0.5, f"{fam}: tick labels overlap")
        title = ax.yaxis.label.get_window_extent()
        for e in ext:
            test.assertFalse(e.overlaps(title), f"{fam}: a tick label runs into the axis title")
        for other in fig.axes:
            if other is not ax and other.get_visible() and other.axison:
                test.assertFalse(title.overlaps(other.get_window_extent()),
                                 f"{fam}: the axis title runs into {other.get_title()}")
    # the legend names every kind of mark, every status shown and every span
    legend = " ".join(t.get_text() for t in fig.legends[0].get_texts())
    for what in ("head-atom terms", "UB", "LB"):
        test.assertIn(what, legend)
    for st in {r["status"] for r in rows}:
        test.assertIn(hf_plot.STATUS_MARKERS[st][1], legend)
    for s in {r["span"] for r in rows}:
        test.assertIn(f"span {s}: keys in {{0..{s}}}^d", legend)
    test.assertLessEqual(fig.legends[0].get_window_extent().width, fig.bbox.width)


class DemoAndLargeTables(unittest.TestCase):
    """The figures of the demo table and of a table up to d = 64, checked by their
    objects (not pixels)."""

    def figure(self, table):
        import matplotlib.pyplot as plt
        fig = hf_plot.build_figure(table_rows(table))
        self.addCleanup(plt.close, fig)
        return fig

    def test_demo_table(self):
        check_figure(self, self.figure(DEMO), table_rows(DEMO))

    def test_large_table(self):
        check_figure(self, self.figure(LARGE), table_rows(LARGE))

    def test_span_colours_are_the_same_in_every_figure(self):
        import matplotlib.colors as mc
        seen = {}
        for table in (DEMO, LARGE, DEMO[:2], [t for t in LARGE if t[2] == 2]):
            for ax in self.figure(table).axes:
                for m in ax.get_lines():
                    if m.get_gid() == "mstar":
                        span = m.hf_row[1]
                        seen.setdefault(span, set()).add(marker_colour(m))
        self.assertEqual({s: len(c) for s, c in seen.items()}, {1: 1, 2: 1, 3: 1})
        # and different spans differ, clearly (not two dark shades)
        c = {s: np.array(mc.to_rgb(next(iter(v)))) for s, v in seen.items()}
        for a in c:
            for b in c:
                if a < b:
                    self.assertGreater(np.abs(c[a] - c[b]).sum(), 0.5, (a, b))

    def test_wide_axis_labels_powers_of_two_only(self):
        # wd up to d = 64: 2^1 .. 2^64 on one axis, every label 2^k, none clipped
        fig = self.figure([t for t in LARGE if t[0].startswith("wd")])
        ax = fig.axes[0]
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        self.assertIn("$2^{64}$", labels)
        self.assertLessEqual(len(labels), 12)
        for t in ax.get_yticklabels():
            if t.get_text():
                self.assertGreaterEqual(t.get_window_extent().x0, 0, t.get_text())

    def test_power_ticks(self):
        labelled, rest = hf_plot.power_ticks(0, 32, 300, 20)
        self.assertEqual(sorted(labelled + rest), [2.0 ** k for k in range(33)])
        self.assertTrue(all(math.log2(v) % 4 == 0 for v in labelled), labelled)
        self.assertEqual(hf_plot.power_ticks(2, 3, 300, 20), ([4.0, 8.0], []))
        self.assertEqual(hf_plot.integer_ticks(2, 3), [5.0, 6.0, 7.0])
        self.assertEqual(hf_plot.integer_ticks(2, 5), [])


def write_result(path, rows, fmt2=True):
    """A minimal RESULT.h5 for hf_plot (only what it reads): /table and the targets."""
    import h5py
    fields = [("name", "S128"), ("d", "<i4"), ("span", "<i4"), ("m_star", "<i8"), ("lb", "S48"),
              ("ub", "S48"), ("status", "S16"), ("n_min_raw", "<i8"), ("n_min_sym", "<i8"),
              ("group_order", "<i8"), ("nodes", "<i8"), ("units", "<i8"), ("seconds", "<f8")]
    if fmt2:
        fields += [("max_atoms", "<i8"), ("engine", "S16")]
    t = np.zeros(len(rows), dtype=fields)
    with h5py.File(path, "w") as f:
        for i, r in enumerate(rows):
            for k, v in r.items():
                if k in t.dtype.names:
                    t[k][i] = -1 if v is None else v
            g = f.create_group(f"rows/{i}")
            g.attrs["target_json"] = np.bytes_(json.dumps(
                {"name": r["name"], "d": r["d"], "heads": [{"atoms": [{}] * (r["head_atoms"] or 1)}]}))
        f.create_dataset("table", data=t)


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hf-plot-test.")
        self.res = os.path.join(self.dir, "r.h5")
        rows = [dict(r, lb=str(r["lb"]), ub=str(r["ub"])) for r in ROWS]
        write_result(self.res, [{k: v for k, v in r.items() if k not in ("family", "file")} for r in rows])

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.dir], check=False)

    def tool(self, *args):
        p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def test_writes_then_keeps_an_existing_png(self):
        out = os.path.join(self.dir, "a.png")
        p = self.tool(self.res, "-o", out, "--no-table")
        self.assertEqual(p.returncode, 0, p.stderr)
        before = os.path.getmtime(out), open(out, "rb").read()
        p = self.tool(self.res, "-o", out, "--no-table")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(), f"hf_plot: -o {out}: exists; give --force to overwrite it")
        self.assertEqual(open(out, "rb").read(), before[1])
        p = self.tool(self.res, "-o", out, "--no-table", "--force")
        self.assertEqual(p.returncode, 0, p.stderr)
        # --no-plot writes nothing and does not care
        self.assertEqual(self.tool(self.res, "-o", out, "--no-plot").returncode, 0)

    def test_bad_output_paths_are_messages(self):
        p = self.tool(self.res, "-o", "/no/such/dir/a.png")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(), "hf_plot: -o /no/such/dir/a.png: directory /no/such/dir does not exist")
        self.assertEqual(p.stdout, "")  # nothing done: not even the table
        p = self.tool(self.res, "-o", self.dir)
        self.assertEqual(p.returncode, 2)
        self.assertIn("is a directory", p.stderr)
        # a directory that takes no new file: the write fails, a message and status 4
        p = self.tool(self.res, "-o", "/proc/hf-plot-test.png", "--no-table")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertTrue(p.stderr.startswith("hf_plot: -o /proc/hf-plot-test.png: cannot write: "), p.stderr)

    def test_format1_rows_without_support_are_infeasible(self):
        old = os.path.join(self.dir, "old.h5")
        rows = [dict(r, lb=str(r["lb"]), ub=str(r["ub"])) for r in ROWS]
        rows[1]["status"] = "exhaustive"  # format 1 said so for a row without a support
        write_result(old, [{k: v for k, v in r.items() if k not in ("family", "file")} for r in rows],
                     fmt2=False)
        got = hf_plot.read_rows(old)
        self.assertEqual([r["status"] for r in got], ["exhaustive", "infeasible", "certified", "certified"])
        self.assertEqual({r["engine"] for r in got}, {"unknown"})
        self.assertEqual({r["max_atoms"] for r in got}, {None})
        table = io.StringIO()
        print(hf_plot.markdown(got, False), file=table)
        self.assertIn("| chain:d=3 | 3 | 2 | - | 8 | unknown | 24 | infeasible | unknown | - |", table.getvalue())


def check_files(paths):
    """`test_hf_plot.py --check RESULT.h5 ...`: check_figure on the figure of real result
    files (tests/cli/plot_table.sh gives it the demo campaign's); exit 1 on a failure."""
    import matplotlib.pyplot as plt
    rows = [r for p in paths for r in hf_plot.read_rows(p)]

    class Check(unittest.TestCase):
        def test_files(self):
            fig = hf_plot.build_figure(rows)
            self.addCleanup(plt.close, fig)
            check_figure(self, fig, rows)

    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromTestCase(Check))
    print(f"checked the figure of {len(rows)} rows of {', '.join(paths)}")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        sys.exit(check_files(sys.argv[2:]))
    unittest.main(verbosity=2)
