#!/usr/bin/python3
"""Plot and tabulate headfuse result files (RESULT.h5; layout in docs/hdf5-format.md).

    tools/hf_plot.py RESULT.h5 [MORE.h5 ...] [-o atoms.png] [--force] [--no-table] [--no-plot]
    tools/hf_plot.py APPROX.h5 [MORE.h5 ...] [-o approx.png] [--force] [--no-table] [--no-plot]

Draws, per family, atoms against d on a log2 axis: the head-atom terms of the target
(2d for W_d), the product-construction upper bound UB, the lower bound LB, and
m_star, one marker per row whose shape says the row's status (certified, exhaustive
within the span, open; an infeasible row, without m*, as a hollow diamond at LB with a
note). Writes a PNG (matplotlib's Agg backend: no display needed; an existing PNG is
kept unless --force) and prints the table as Markdown, the same table as `headfuse
table FILES --markdown`.

Given APPROX.h5 files (`headfuse approx`, docs/approx.md) it draws instead, per target,
the train and test RMS against the atom budget m on a log axis, a vertical line at the
size of the smallest exact head known to the run (attribute exact_atoms) and the
rounding level, and prints the table as `headfuse table FILES --markdown` does.

Needs python3-h5py and python3-matplotlib (Debian packages; scripts/setup installs them).
"""
import argparse
import json
import math
import os
import sys

import h5py

# The table exactly as `headfuse table FILES --markdown` prints it (src/cli/cmd_table.c):
# these fields under these headers, numbers right-aligned, '-' for null, seconds with
# three decimals, and a file column when there are several files.
FIELDS = ["name", "d", "span", "m_star", "lb", "lb_rule", "ub", "status", "engine", "max_atoms",
          "n_min_raw", "n_min_sym", "group_order", "nodes", "units", "seconds"]
HEADERS = ["name", "d", "span", "m*", "LB", "rule", "UB", "status", "engine", "max_atoms", "n_min",
           "n_sym", "group", "nodes", "units", "seconds"]
TEXT_FIELDS = ("name", "lb_rule", "status", "engine")
STATUS_MARKERS = {"certified": ("o", "certified (LB = UB)"),
                  "exhaustive": ("s", "exhaustive within span"),
                  "open": ("^", "open (bar: LB..UB)"),
                  "infeasible": ("D", "no head with keys in the span (drawn at LB)")}


def text(x):
    """A fixed-length HDF5 string field as str."""
    if isinstance(x, bytes):
        return x.split(b"\0", 1)[0].decode("utf-8")
    return str(x)


def head_atoms(target_json):
    """Head-atom terms of a target: atoms over all its heads (None if unknown)."""
    try:
        t = json.loads(target_json)
        return sum(len(h["atoms"]) for h in t["heads"])
    except (ValueError, KeyError, TypeError):
        return None


def read_rows(path):
    """The table rows of one result file as dicts (null values as None)."""
    rows = []
    with h5py.File(path, "r") as f:
        if "table" not in f:
            raise ValueError(f"{path}: not a headfuse result file (no /table)")
        table = f["table"][()]
        for i, r in enumerate(table):
            row = {c: r[c] for c in table.dtype.names}
            # files of format 1 do not say how their rows were searched
            row.setdefault("engine", b"unknown")
            row.setdefault("lb_rule", b"unknown")
            row.setdefault("max_atoms", -1)
            for c in ("name", "lb", "lb_rule", "ub", "status", "engine"):
                row[c] = text(row[c])
            for c in ("d", "span", "m_star", "n_min_raw", "n_min_sym", "group_order",
                      "nodes", "units", "max_atoms"):
                row[c] = int(row[c]) if int(row[c]) >= 0 else None
            row["seconds"] = float(row["seconds"]) if row["seconds"] >= 0 else None
            # decimal strings: may exceed 64 bits; "-1" is null
            row["lb"] = int(row["lb"]) if row["lb"] not in ("", "-1") else None
            row["ub"] = int(row["ub"]) if row["ub"] not in ("", "-1") else None
            # format 1 said "exhaustive" for a row without a support in its span
            if row["status"] == "exhaustive" and row["m_star"] is None:
                row["status"] = "infeasible"
            g = f.get(f"rows/{i}")
            tj = g.attrs.get("target_json") if g is not None else None
            row["head_atoms"] = head_atoms(text(tj)) if tj is not None else None
            row["family"] = row["name"].split(":", 1)[0] if ":" in row["name"] else row["name"]
            row["file"] = path
            rows.append(row)
    return rows


def cell(row, field):
    v = row[field]
    if field == "max_atoms" and v == 0:
        return "none"  # no limit: the search went up to UB
    if v is None:
        return "-"
    if field == "seconds":
        return f"{v:.3f}"
    return str(v).replace("|", "\\|")


def markdown(rows, with_file):
    headers = HEADERS + (["file"] if with_file else [])
    fields = FIELDS + (["file"] if with_file else [])
    align = ["---" if f in TEXT_FIELDS or f == "file" else "---:" for f in fields]
    lines = ["".join(f"| {h} " for h in headers) + "|", "".join(f"| {a} " for a in align) + "|"]
    for r in rows:
        lines.append("".join(f"| {cell(r, f)} " for f in fields) + "|")
    return "\n".join(lines)


def log2_safe(v):
    """Values beyond float range are left out of the plot (the table keeps them)."""
    try:
        f = float(v)
        return f if math.isfinite(f) and f > 0 else None
    except (OverflowError, TypeError, ValueError):
        return None


# markers of the bounds are drawn this many points left (UB) and right (LB) of their d,
# and above the m* markers, so that a bound equal to m* (UB = m* is common) stays visible
BOUND_SHIFT_PT = 7
BOUND_MS = 6
MSTAR_MS = 10


def integer_ticks(lo, hi, axes_px, label_px=15, prefer=()):
    """Integer ticks on a log axis from lo to hi (data units) of axes_px pixels: every
    power of two, then every other integer whose label keeps label_px from the others:
    first the values in `prefer`, in its order (what the panel shows: m* before the
    bounds), then the rest from the smallest (where the log axis has room). Returns
    (labelled, unlabelled)."""
    first, last = max(1, math.ceil(lo)), math.floor(hi)
    if last < first or axes_px <= 0:
        return [], []
    span = math.log2(hi) - math.log2(lo)
    pos = lambda v: (math.log2(v) - math.log2(lo)) / span * axes_px
    powers = [2 ** k for k in range(int(math.log2(first)), int(math.log2(last)) + 2) if first <= 2 ** k <= last]
    others = list(range(first, last + 1)) if last - first <= 4096 else []
    chosen = []
    wanted = [int(v) for v in prefer if v and float(v).is_integer() and first <= v <= last]
    for v in powers + wanted + [v for v in others if v & (v - 1)]:
        if v in chosen:
            continue
        if all(abs(pos(v) - pos(c)) >= label_px for c in chosen) or v in powers:
            chosen.append(v)
    chosen.sort()
    rest = [v for v in others if v not in chosen] if len(others) <= 256 else []
    return chosen, rest


def build_figure(rows, title=None):
    """The figure of result rows (matplotlib, Agg): one panel per family. Artists carry a
    gid naming what they show ("ub", "lb", "head_atoms", "mstar", "infeasible", ...)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, MaxNLocator, NullFormatter
    from matplotlib.transforms import offset_copy

    families = []
    for r in rows:
        if r["family"] not in families:
            families.append(r["family"])
    ncol = min(3, len(families))
    nrow = (len(families) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 4.2 * nrow), squeeze=False)
    spans = sorted({r["span"] for r in rows})
    cmap = plt.get_cmap("viridis")
    span_color = {s: cmap(0.15 + 0.7 * i / max(1, len(spans) - 1)) for i, s in enumerate(spans)}
    panels = []

    for k, fam in enumerate(families):
        ax = axes[k // ncol][k % ncol]
        fr = sorted((r for r in rows if r["family"] == fam), key=lambda r: (r["d"], r["span"]))
        # one value per d for the target's own quantities (they do not depend on the span)
        per_d = {}
        for r in fr:
            per_d.setdefault(r["d"], r)
        ds = sorted(per_d)
        for key, label, style, shift in (
                ("head_atoms", "head-atom terms", dict(color="0.45", ls="-", marker="."), 0),
                ("ub", "UB (product construction)", dict(color="tab:red", ls="--", marker="v"), -1),
                ("lb", "LB", dict(color="tab:blue", ls=":", marker="^", mfc="none"), 1)):
            pts = [(d, log2_safe(per_d[d][key])) for d in ds]
            pts = [(d, y) for d, y in pts if y is not None]
            if not pts:
                continue
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            marker = style.pop("marker")
            # the line through the true positions, under everything; its markers on top,
            # shifted sideways in screen space so that they never sit on an m* marker
            ax.plot(xs, ys, label=label, lw=1.4, zorder=2, gid=key + "-line", **style)
            tr = offset_copy(ax.transData, fig=fig, x=shift * BOUND_SHIFT_PT, y=0, units="points")
            ax.plot(xs, ys, ls="none", marker=marker, ms=BOUND_MS, zorder=6, transform=tr, gid=key,
                    color=style["color"], mfc=style.get("mfc", style["color"]))
        # m_star: one marker per row; several spans at one d are nudged apart. An open
        # row shows its known interval LB..UB as a bar, its marker hollow (at m_star when
        # a support was found, else at UB: the best known head). An infeasible row (no
        # head with keys in its span) has no m*: a hollow diamond at LB with a note.
        ys = []
        for r in fr:
            dx = 0.08 * (spans.index(r["span"]) - (len(spans) - 1) / 2) if len(spans) > 1 else 0
            marker = STATUS_MARKERS.get(r["status"], ("x", r["status"]))[0]
            color = span_color[r["span"]]
            gid = "mstar"
            if r["status"] == "open":
                lo, hi = log2_safe(r["lb"]), log2_safe(r["ub"])
                if lo and hi:
                    ax.plot([r["d"] + dx] * 2, [lo, hi], color=color, lw=3, alpha=0.5, zorder=3)
                y = log2_safe(r["m_star"]) or hi
                face = "white"
            elif r["status"] == "infeasible":
                y = log2_safe(r["lb"])
                face = "white"
                gid = "infeasible"
                if y is not None:
                    ax.annotate(f"none in span {r['span']}", (r["d"] + dx, y), xytext=(0, -14),
                                textcoords="offset points", ha="center", va="top", fontsize=7,
                                color="0.25", zorder=7, gid="infeasible-note")
            else:
                y = log2_safe(r["m_star"])
                if y is None and r["status"] == "certified":
                    y = log2_safe(r["lb"])  # m* = LB = UB, beyond 64 bits in the table
                face = color
            if y is None:
                continue
            ys.append(y)
            ax.plot(r["d"] + dx, y, marker=marker, ms=MSTAR_MS, ls="none",
                    mec=color if face == "white" else "black", mew=1.6 if face == "white" else 1.0,
                    color=face, zorder=4, gid=gid)
        # m* first, then the bounds, then the head-atom terms: the order labels are tried
        vals = ys + [v for k in ("lb", "ub", "head_atoms") for d in ds for v in [log2_safe(per_d[d][k])] if v]
        lim = None
        if vals:
            # whole powers of two at both ends, so every panel has at least two labels
            lo, hi = math.floor(math.log2(min(vals))), math.ceil(math.log2(max(vals)))
            if hi == lo:
                hi += 1
            lim = (2 ** lo / 1.15, 2 ** hi * 1.15)
            ax.set_ylim(*lim)
        ax.set_yscale("log", base=2)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("d (query dimension)")
        ax.set_ylabel("atoms (log2 axis)")
        ax.set_title(fam if len(ds) > 1 or ":" in fr[0]["name"] else f"{fam} (d = {ds[0]})")
        if len(ds) == 1:
            ax.set_xlim(ds[0] - 1, ds[0] + 1)
        panels.append((ax, lim, vals))
    for k in range(len(families), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")

    # one legend for the figure: bounds, then m* by status and by span
    handles = [Line2D([], [], color="0.45", marker=".", label="head-atom terms"),
               Line2D([], [], color="tab:red", ls="--", marker="v", label="UB (product construction)"),
               Line2D([], [], color="tab:blue", ls=":", marker="^", mfc="none", label="LB")]
    for st, (m, label) in STATUS_MARKERS.items():
        if any(r["status"] == st for r in rows):
            hollow = st in ("open", "infeasible")
            handles.append(Line2D([], [], ls="none", marker=m, ms=9, mec="black",
                                  color="white" if hollow else "0.6",
                                  label=label if st == "infeasible" else f"m* {label}"))
    if len(spans) > 1:
        for s in spans:
            handles.append(Line2D([], [], ls="none", marker="o", ms=9, mec="black",
                                  color=span_color[s], label=f"m* at span {s}"))
    fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(title or "Minimal atoms of one head equal to a sum of heads", fontsize=13)
    legend_rows = (len(handles) + 3) // 4
    fig.tight_layout(rect=(0, 0.045 * legend_rows / nrow + 0.03, 1, 0.96))
    # integer ticks once the panels have their size: every one whose label fits
    for ax, lim, vals in panels:
        if lim is None:
            continue
        label_px = 0.9 * font_px(fig)  # digits need less than the font's full height
        labelled, rest = integer_ticks(lim[0], lim[1], ax.get_window_extent().height, label_px,
                                       prefer=vals)
        ax.yaxis.set_major_locator(FixedLocator(labelled))
        ax.yaxis.set_major_formatter(FuncFormatterInt())
        ax.yaxis.set_minor_locator(FixedLocator(rest))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(*lim)
        ax.grid(True, which="major", alpha=0.3)
    return fig


def font_px(fig):
    """Height of a y tick label's font in pixels."""
    import matplotlib
    from matplotlib.font_manager import FontProperties
    size = FontProperties(size=matplotlib.rcParams["ytick.labelsize"]).get_size_in_points()
    return size * fig.dpi / 72


def FuncFormatterInt():
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda y, _: f"{y:.0f}")


def plot(rows, out, title=None):
    import matplotlib.pyplot as plt
    fig = build_figure(rows, title)
    try:
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)


# ---------------------------------------------------------------- APPROX.h5

APPROX_FORMAT = "headfuse-approx-1"


def is_approx(path):
    """True when path is an APPROX.h5 (root attribute format = headfuse-approx-1)."""
    try:
        with h5py.File(path, "r") as f:
            return text(f.attrs.get("format", b"")) == APPROX_FORMAT
    except OSError:
        return False


def read_approx(path):
    """One APPROX.h5 as a dict: its target's attributes and its rows (ascending m)."""
    with h5py.File(path, "r") as f:
        if "table" not in f:
            raise ValueError(f"{path}: not a headfuse approx file (no /table)")
        a = f.attrs
        lb = text(a.get("lower_bound", ""))
        t = {"file": path, "name": text(a["name"]), "d": int(a["d"]),
             "exact_atoms": int(a["exact_atoms"]), "exact_source": text(a.get("exact_source", "")),
             "lower_bound": int(lb) if lb not in ("", "-1") else None,
             "target_rms": float(a["target_rms"]), "rounding_rms": float(a["rounding_rms"]),
             "rows": []}
        for r in f["table"][()]:
            row = {c: r[c] for c in r.dtype.names}
            for c in ("converged_reason", "start", "status"):
                row[c] = text(row[c])
            for c in ("m", "restarts", "best_restart", "iterations"):
                row[c] = int(row[c])
            for c in ("train_mse", "test_mse", "seconds"):
                row[c] = float(row[c])
            t["rows"].append(row)
    return t


def rms(mse):
    return math.sqrt(mse) if math.isfinite(mse) else math.inf


def approx_note(t, row):
    """The note column of src/cli/cmd_approx.c (row_note)."""
    if row["status"] == "rounding":
        if t["exact_atoms"] > 0 and row["m"] >= t["exact_atoms"]:
            return "exact head reached (rounding level)"
        return f"rounding level: numerical evidence of an exact {row['m']}-atom head"
    if row["status"] == "missed":
        return f"MISSED: an exact {t['exact_atoms']}-atom head is known"
    return ""


def approx_markdown(targets):
    """Exactly `headfuse table FILES --markdown` on APPROX files: one table per file."""
    lines = []
    for t in targets:
        lines.append("| target | m | train RMS | test RMS | restarts | best | start | iterations | "
                     "reason | seconds | note |")
        lines.append("|---|---:|---:|---:|---:|---:|---|---:|---|---:|---|")
        for r in t["rows"]:
            lines.append(f"| {t['name']} | {r['m']} | {rms(r['train_mse']):.3e} | "
                         f"{rms(r['test_mse']):.3e} | {r['restarts']} | {r['best_restart']} | "
                         f"{r['start']} | {r['iterations']} | {r['converged_reason']} | "
                         f"{r['seconds']:.2f} | {approx_note(t, r)} |")
    return "\n".join(lines)


def plot_approx(targets, out, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    n = len(targets)
    ncol = min(3, n)
    nrow = (n + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.6 * ncol, 4.4 * nrow), squeeze=False)
    for k, t in enumerate(targets):
        ax = axes[k // ncol][k % ncol]
        ms = [r["m"] for r in t["rows"]]
        # a zero error has no place on a log axis: drawn at a floor below rounding level
        floor = 1e-18
        for key, label, style in (("train_mse", "train RMS", dict(color="tab:blue", marker="o")),
                                  ("test_mse", "test RMS", dict(color="tab:orange", marker="s",
                                                                ls="--", mfc="none"))):
            ys = [max(rms(r[key]), floor) for r in t["rows"]]
            pts = [(m, y) for m, y in zip(ms, ys) if math.isfinite(y)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, lw=1.4, ms=7, **style)
        level = t["rounding_rms"] * max(1.0, t["target_rms"])
        ax.axhline(level, color="0.5", ls=":", lw=1, label=f"rounding level ({level:.0e})")
        if t["exact_atoms"] > 0:
            src = f", {t['exact_source']}" if t["exact_source"] else ""
            ax.axvline(t["exact_atoms"], color="tab:red", lw=1.6,
                       label=f"exact head known: m = {t['exact_atoms']}{src}")
        if t["lower_bound"] is not None and t["lower_bound"] != t["exact_atoms"] \
                and ms and ms[0] - 1 <= t["lower_bound"] <= ms[-1] + 1:
            ax.axvline(t["lower_bound"], color="tab:blue", lw=1, ls="-.",
                       label=f"lower bound LB = {t['lower_bound']}")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("atom budget m")
        ax.set_ylabel("RMS error (log axis)")
        ax.set_title(t["name"] if n == 1 or len({u["name"] for u in targets}) == n
                     else f"{t['name']} ({os.path.basename(t['file'])})")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    for k in range(n, nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    fig.suptitle(title or "Best error of one head with m atoms", fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def check_output(path, force):
    """None when the PNG can be written at path, else the message (exit status 2): its
    directory must exist and be writable, and an existing file is kept unless --force."""
    d = os.path.dirname(path) or "."
    if os.path.isdir(path):
        return f"-o {path}: is a directory; name a PNG file"
    if not os.path.isdir(d):
        return f"-o {path}: directory {d} does not exist"
    if not os.access(d, os.W_OK | os.X_OK):
        return f"-o {path}: directory {d} is not writable"
    if os.path.exists(path) and not force:
        return f"-o {path}: exists; give --force to overwrite it"
    return None


def save(draw, what, out):
    """Draw and save; a failure to write is a message (exit status 4), not a traceback."""
    try:
        draw(what, out)
    except OSError as e:
        print(f"hf_plot: -o {out}: cannot write: {e.strerror or e}", file=sys.stderr)
        return 4
    print(f"hf_plot: wrote {out}", file=sys.stderr)
    return 0


def main_approx(args):
    targets = []
    for path in args.files:
        try:
            targets.append(read_approx(path))
        except (OSError, ValueError, KeyError) as e:
            print(f"hf_plot: {path}: {e}", file=sys.stderr)
            return 6
    if not args.no_table:
        print(approx_markdown(targets))
    if not args.no_plot:
        return save(lambda t, o: plot_approx(t, o, args.title), targets, args.output)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+",
                    help="RESULT.h5 or APPROX.h5 files (not both; shown in the order given)")
    ap.add_argument("-o", "--output",
                    help="PNG to write (default atoms.png, approx.png for APPROX files)")
    ap.add_argument("--title", help="figure title")
    ap.add_argument("--no-table", action="store_true", help="do not print the Markdown table")
    ap.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    ap.add_argument("--force", action="store_true", help="overwrite an existing PNG")
    args = ap.parse_args(argv)
    napprox = sum(is_approx(p) for p in args.files)
    if napprox and napprox < len(args.files):
        print("hf_plot: give either search results or APPROX files, not both", file=sys.stderr)
        return 2
    # the output before any work: an existing PNG is kept unless --force
    args.output = args.output or ("approx.png" if napprox else "atoms.png")
    problem = None if args.no_plot else check_output(args.output, args.force)
    if problem:
        print(f"hf_plot: {problem}", file=sys.stderr)
        return 2
    if napprox:
        return main_approx(args)
    rows = []
    for path in args.files:
        try:
            rows += read_rows(path)
        except (OSError, ValueError, KeyError) as e:
            print(f"hf_plot: {path}: {e}", file=sys.stderr)
            return 6 if os.path.exists(path) else 2
    if not rows:
        print("hf_plot: the files hold no rows", file=sys.stderr)
        return 2
    if not args.no_table:
        print(markdown(rows, len(args.files) > 1))
    if not args.no_plot:
        return save(lambda r, o: plot(r, o, args.title), rows, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
