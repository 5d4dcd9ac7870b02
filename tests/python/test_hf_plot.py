#!/usr/bin/python3
"""Tests of tools/hf_plot.py (issue 13, point 10 and the -o part of point 1): rows with no
support in their span are drawn (a hollow diamond at LB with a note), a bound equal to m*
stays visible next to the m* marker, the log2 axis labels every integer that fits, and the
-o path is checked before any work (an existing PNG kept unless --force, a bad directory
a message with exit status 2, a failed write a message with status 4; never a
traceback). unittest, so `python3 -m pytest tests/python` runs them too; CTest runs
`python3 tests/python/test_hf_plot.py` (test py.hf_plot)."""
import io
import json
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
        self.assertAlmostEqual(m.get_xdata()[0], 3, delta=0.1)  # at d = 3 (nudged by span)
        self.assertEqual(m.get_ydata()[0], 8)  # at LB
        self.assertEqual(m.get_marker(), "D")
        self.assertEqual(m.get_markerfacecolor(), "white")
        notes = artists(self.fig, "infeasible-note")
        self.assertEqual([n.get_text() for n in notes], ["none in span 2"])
        legend = [t.get_text() for t in self.fig.legends[0].get_texts()]
        self.assertIn("no head with keys in the span (drawn at LB)", legend)

    def test_bound_equal_to_mstar_stays_visible(self):
        # chain d = 2: UB = m* = 7; the UB marker sits beside the m* marker and above it
        ub = [a for a in artists(self.fig, "ub") if 7 in list(a.get_ydata())][0]
        ms = [a for a in artists(self.fig, "mstar") if a.get_ydata()[0] == 7][0]
        i = list(ub.get_ydata()).index(7)
        (ux, uy), (mx, my) = centre_px(ub, i), centre_px(ms)
        self.assertAlmostEqual(uy, my, delta=0.5)
        # at least the shift (7 pt at 110 dpi, about 10.7 px) apart sideways
        self.assertGreater(abs(ux - mx), hf_plot.BOUND_SHIFT_PT * self.fig.dpi / 72 - 0.5)
        self.assertGreater(ub.get_zorder(), ms.get_zorder())
        self.assertLess(ub.get_markersize(), ms.get_markersize())
        # LB = m* (wd rows): shifted the other way
        lb = [a for a in artists(self.fig, "lb") if 4 in list(a.get_ydata())]
        self.assertTrue(lb)

    def test_log_axis_labels_every_integer_that_fits(self):
        # a wide panel (4..24 on 226 px): powers of two, and integers where labels fit
        ax = [a for a in self.fig.axes if a.get_title() == "chain"][0]
        ticks = [(t.get_position()[1], t.get_text()) for t in ax.get_yticklabels() if t.get_text()]
        labels = [t for _, t in ticks]
        for v in ("4", "8", "16", "32"):
            self.assertIn(v, labels)
        self.assertTrue(all(t == str(int(y)) for y, t in ticks), ticks)
        self.assertGreater(len(labels), 6)
        px = sorted(ax.transData.transform((0, y))[1] for y, _ in ticks)
        gap = 0.9 * hf_plot.font_px(self.fig) - 0.01
        self.assertTrue(all(b - a >= gap for a, b in zip(px, px[1:])), px)
        # a narrow one (chain d = 2 alone: 4..7): every integer gets its label
        fig = hf_plot.build_figure(ROWS[:1])
        fig.canvas.draw()
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
        self.assertEqual(labels, ["4", "5", "6", "7", "8", "9"])
        import matplotlib.pyplot as plt
        plt.close(fig)

    def test_integer_ticks_keep_labels_apart(self):
        labelled, rest = hf_plot.integer_ticks(1 / 1.15, 2 ** 20 * 1.15, 300)
        powers = [2 ** k for k in range(21)]
        self.assertTrue(set(powers) <= set(labelled))
        px = [np.log2(v) / (np.log2(2 ** 20 * 1.15) - np.log2(1 / 1.15)) * 300 for v in labelled]
        others = [v for v in labelled if v & (v - 1)]
        for v in others:  # a non-power label keeps its distance from every other label
            p = np.log2(v) / (np.log2(2 ** 20 * 1.15) - np.log2(1 / 1.15)) * 300
            self.assertTrue(all(abs(p - q) >= 15 for q, w in zip(px, labelled) if w != v))
        self.assertEqual(hf_plot.integer_ticks(4 / 1.15, 8 * 1.15, 300)[0], [4, 5, 6, 7, 8, 9])


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
