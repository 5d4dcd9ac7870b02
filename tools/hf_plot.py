#!/usr/bin/python3
"""Plot and tabulate headfuse result files (RESULT.h5; layout in docs/hdf5-format.md).

    tools/hf_plot.py RESULT.h5 [MORE.h5 ...] [-o atoms.png] [--force] [--no-table] [--no-plot]
    tools/hf_plot.py APPROX.h5 [MORE.h5 ...] [-o approx.png] [--force] [--no-table] [--no-plot]

Draws, per family, atoms against d on a log2 axis: the head-atom terms of the target
(2d for W_d), the product-construction upper bound UB, the lower bound LB, and
m_star, one marker per row whose shape says the row's status (certified, exhaustive
within the span, open; an infeasible row, without m*, as a hollow diamond at LB with a
note) and whose colour says its span (the same colour in every figure); at each d the
markers of UB, of the rows and of LB stand side by side, so that none hides another, and
the axis is labelled 2^k. Writes a PNG (matplotlib's Agg backend: no display needed; an existing PNG is
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
HEADERS = FIELDS  # one name for each column, as in --json, --csv and RESULT.h5
TEXT_FIELDS = ("name", "lb_rule", "status", "engine")
STATUS_MARKERS = {"certified": ("o", "certified: m*, the minimum for all keys"),
                  "exhaustive": ("s", "exhaustive: m*, the minimum within the span"),
                  "open": ("^", "open: stopped at max_atoms; hollow at the best\nhead known, "
                                "bar from LB to UB"),
                  "infeasible": ("D", "infeasible: no head with keys in the span;\nhollow, "
                                      "at LB")}


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
            # format 3: m* in decimal at any size (m_star is -1 above 2^63 - 1)
            if "m_star_dec" in table.dtype.names:
                dec = text(r["m_star_dec"])
                row["m_star"] = int(dec) if dec not in ("", "-1") else None
            row.pop("m_star_dec", None)
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


# One colour per span, the same in every figure (span 2 is always green): Okabe-Ito's
# colour-blind-safe colours without the red and the blue of UB and LB; spans past the
# list take its colours again.
SPAN_COLOURS = ("#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#F0E442", "#8C564B", "#7F7F7F",
                "#BCBD22")
UB_COLOUR, LB_COLOUR, TERMS_COLOUR = "tab:red", "tab:blue", "0.45"


def span_colour(span):
    return SPAN_COLOURS[(span - 1) % len(SPAN_COLOURS)]


# At each d the markers stand side by side, in points from the d: UB's, then one m* marker
# per row (by span), then LB's, so that none covers another whatever the values are (UB =
# m* = LB is common). Sizes in points; a panel whose d are too close for them shrinks
# them (never below MIN_MS) so that the markers of neighbouring d stay apart too.
MSTAR_MS = 10
BOUND_MS = 6.5
SLOT_GAP = 2.0
MIN_MS = 4.5
MIN_GAP = 2.0  # more than the widest two half edges (1.6 pt hollow, 1.2 pt bounds)


def slot_offsets(nrows, ms, bs, gap):
    """Offsets in points of UB's marker, the nrows m* markers and LB's marker at one d,
    centred on the d: (ub, [m* ...], lb)."""
    widths = [bs] + [ms] * nrows + [bs]
    total = sum(widths) + gap * (len(widths) - 1)
    x, centres = -total / 2, []
    for w in widths:
        centres.append(x + w / 2)
        x += w + gap
    return centres[0], centres[1:-1], centres[-1]


def group_width(nrows, ms, bs, gap):
    return nrows * ms + 2 * bs + (nrows + 1) * gap


# An axis with at most this many integers from its lowest to its highest power of two
# also labels the integers between them (4, 5, 6, 7, 8: every one, so none is odd out)
FEW_INTEGERS = 12


def power_ticks(lo, hi, axes_px, label_px):
    """Ticks of a log2 axis from 2^lo to 2^hi on axes_px pixels: (labelled, unlabelled)
    powers of two, every step-th one labelled (step 1, 2, 4, 5, 8, 10, 16, ...) so that
    labels keep label_px apart."""
    octave_px = axes_px / max(1e-9, hi - lo + 1)  # at most: the ends have margins
    step = 1
    for step in (1, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100):
        if step * octave_px >= label_px:
            break
    labelled = [2.0 ** k for k in range(lo, hi + 1) if k % step == 0]
    if len(labelled) < 2:  # at least both ends
        labelled = sorted({2.0 ** lo, 2.0 ** hi})
    rest = [2.0 ** k for k in range(lo, hi + 1) if 2.0 ** k not in labelled]
    return labelled, rest


def integer_ticks(lo, hi):
    """The integers strictly between the powers of two of a short axis (2^lo to 2^hi
    holding at most FEW_INTEGERS integers), else none."""
    a, b = 2 ** lo, 2 ** hi
    if lo < 0 or b - a + 1 > FEW_INTEGERS:
        return []
    return [float(v) for v in range(a + 1, b) if v & (v - 1)]


def power_label(y, _pos=None):
    """2^k for a power of two (mathtext), as tools/hf_bounds.py labels its axis."""
    k = round(math.log2(y)) if y > 0 else 0
    return f"$2^{{{k}}}$" if y > 0 and abs(2.0 ** k - y) < 1e-9 * y else ""


def panel_points(fr):
    """The marker groups of one panel: {d: rows at d, by span then as given}."""
    groups = {}
    for r in fr:
        groups.setdefault(r["d"], []).append(r)
    for d in groups:
        groups[d].sort(key=lambda r: r["span"])
    return groups


def row_y(r):
    """Where a row's marker goes: m*; an open row at m* when a support was found, else at
    UB (the best head known); an infeasible row at LB; None when out of float range."""
    if r["status"] == "infeasible":
        return log2_safe(r["lb"])
    if r["status"] == "open":
        return log2_safe(r["m_star"]) or log2_safe(r["ub"])
    y = log2_safe(r["m_star"])
    if y is None and r["status"] == "certified":
        y = log2_safe(r["lb"])  # m* = LB = UB, beyond 64 bits in the table
    return y


LEGEND_TITLE = "at each d, side by side: UB, one m* marker per row (colour: its span, shape: its status), LB"


def build_figure(rows, title=None):
    """The figure of result rows (matplotlib, Agg): one panel per family. Artists carry a
    gid naming what they show ("ub", "lb", "head_atoms", "mstar", "infeasible", ...); the
    marker of a row also carries hf_row = (name, span) and hf_point = (d, y)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter
    from matplotlib.transforms import offset_copy

    families = list(dict.fromkeys(r["family"] for r in rows))
    ncol = min(3, len(families))
    nrow = (len(families) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 4.0 * nrow + 1.0), squeeze=False)
    spans = sorted({r["span"] for r in rows})
    panels = []

    # first the axes (limits, labels, titles), so that the layout is known before the
    # markers are sized to it
    for k, fam in enumerate(families):
        ax = axes[k // ncol][k % ncol]
        fr = [r for r in rows if r["family"] == fam]
        groups = panel_points(fr)
        ds = sorted(groups)
        vals = [v for r in fr for v in [row_y(r)] + [log2_safe(r[c]) for c in ("lb", "ub", "head_atoms")]
                if v is not None]
        lim = None
        if vals:
            # whole powers of two at both ends, so that every panel has two labels
            lo, hi = math.floor(math.log2(min(vals))), math.ceil(math.log2(max(vals)))
            hi = hi if hi > lo else lo + 1
            lim = (lo, hi)
            ax.set_ylim(2.0 ** lo / 1.15, 2.0 ** hi * 1.15)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("d (query dimension)")
        ax.set_ylabel("atoms (log2 axis)")
        single = len(ds) == 1
        ax.set_title(fam if not single or ":" in fr[0]["name"] else f"{fam} (d = {ds[0]})")
        if single:
            ax.set_xlim(ds[0] - 1, ds[0] + 1)
            ax.xaxis.set_major_locator(FixedLocator(ds))
        else:
            ax.set_xlim(ds[0] - 0.6, ds[-1] + 0.6)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=2))
        ax.grid(True, which="major", alpha=0.3)
        panels.append((ax, fr, groups, ds, lim))
    for k in range(len(families), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")

    # one legend for the figure: what each mark is, then the colour of each span
    handles = [Line2D([], [], color=TERMS_COLOUR, marker=".", label="head-atom terms of the target"),
               Line2D([], [], color=UB_COLOUR, ls="--", marker="v", ms=BOUND_MS,
                      label="UB: product construction (left of m*)"),
               Line2D([], [], color=LB_COLOUR, ls=":", marker="^", ms=BOUND_MS, mfc="white",
                      label="LB: lower bound (right of m*)")]
    shown = {r["status"] for r in rows}
    for st, (m, label) in STATUS_MARKERS.items():
        if st in shown:
            hollow = st in ("open", "infeasible")
            handles.append(Line2D([], [], ls="none", marker=m, ms=9, mec="black", mew=1.2,
                                  color="white" if hollow else "0.6", label=label))
    for s in spans:
        handles.append(Line2D([], [], ls="none", marker="o", ms=9, mec="black",
                              color=span_colour(s), label=f"span {s}: keys in {{0..{s}}}^d"))
    fig.suptitle(title or "Minimal atoms of one head equal to a sum of heads", fontsize=13)
    # as many legend columns as the figure's width takes
    for ncols_legend in (3, 2, 1):
        legend = fig.legend(handles=handles, loc="lower center", ncol=ncols_legend,
                            frameon=False, bbox_to_anchor=(0.5, 0.0), fontsize=9,
                            title=LEGEND_TITLE if ncols_legend > 1 else LEGEND_TITLE.replace(
                                " (", "\n("), title_fontsize=9)
        fig.canvas.draw()
        if legend.get_window_extent().width <= 0.98 * fig.bbox.width or ncols_legend == 1:
            break
        legend.remove()
    legend_h = legend.get_window_extent().height / fig.bbox.height
    fig.tight_layout(rect=(0, legend_h + 0.01, 1, 0.95))

    label_px = 1.7 * font_px(fig)
    crowded = False
    for ax, fr, groups, ds, lim in panels:
        if lim is None:
            continue
        height = ax.get_window_extent().height
        labelled, rest = power_ticks(lim[0], lim[1], height, label_px)
        ax.yaxis.set_major_locator(FixedLocator(labelled))
        ax.yaxis.set_major_formatter(FuncFormatter(power_label))
        between = integer_ticks(lim[0], lim[1])
        ax.yaxis.set_minor_locator(FixedLocator(sorted(rest + between)))
        if between:
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _, b=between: f"{y:.0f}" if y in b else ""))
            ax.tick_params(axis="y", which="minor", labelsize=8, labelcolor="0.3")
        else:
            ax.yaxis.set_minor_formatter(NullFormatter())
        # room above and below for a whole marker at the extreme values
        room = (MSTAR_MS / 2 + 3) * fig.dpi / 72
        pad = max(math.log2(1.15), room * (lim[1] - lim[0]) / max(1.0, height - 2 * room))
        ax.set_ylim(2.0 ** (lim[0] - pad), 2.0 ** (lim[1] + pad))
        crowded |= draw_panel(fig, ax, fr, groups, ds, offset_copy)
    if crowded:
        # one more line in the legend's title: the layout makes room for it (the markers'
        # offsets are in points and stay as they are)
        legend.set_title(legend.get_title().get_text() + "\nwhere d are too close for them all, "
                         "a bound equal to m* is shown by its line alone")
        fig.canvas.draw()
        legend_h = legend.get_window_extent().height / fig.bbox.height
        fig.tight_layout(rect=(0, legend_h + 0.01, 1, 0.95))
    return fig


def target_value(rows, key):
    """The target's own head-atom terms, LB or UB at one d from its rows (of any span):
    the best bound any of them holds (a row whose m* is proven for all keys records it as
    its LB; a row stopped before m* does not)."""
    vals = [v for v in (log2_safe(r[key]) for r in rows) if v is not None]
    if not vals:
        return None
    return max(vals) if key == "lb" else min(vals)


def group_sizes(groups, ds, pt_per_d):
    """Marker sizes at each d: {d: (ms, bs, gap, bounds)}, from the room to its nearest
    neighbour (the axes' edge for a lone d). A group that would not fit even at MIN_MS
    leaves out the bound markers equal to one of its m* (the bound's line still runs
    through that m* marker): bounds is False then."""
    out = {}
    for i, d in enumerate(ds):
        near = ([d - ds[i - 1]] if i > 0 else []) + ([ds[i + 1] - d] if i + 1 < len(ds) else [])
        room = 0.9 * (min(near) if near else 2) * pt_per_d
        n = len(groups[d])
        scale = min(1.0, room / group_width(n, MSTAR_MS, BOUND_MS, SLOT_GAP))
        # the gap keeps edges apart however small the markers get
        ms, bs, gap = MSTAR_MS * scale, BOUND_MS * scale, max(MIN_GAP, SLOT_GAP * scale)
        bounds = ms >= MIN_MS
        if not bounds:  # without the bounds' slots, as large as the room allows
            ms = max(MIN_MS, min(MSTAR_MS, (room - (n + 1) * gap) / n))
            bs = 0
        out[d] = (ms, bs, gap, bounds)
    return out


def draw_panel(fig, ax, fr, groups, ds, offset_copy):
    """The lines and markers of one panel, sized to the room between its d. True when a
    bound's marker was left out for want of room."""
    crowded = False
    x0, x1 = ax.get_xlim()
    pt_per_d = ax.get_window_extent().width * 72 / fig.dpi / (x1 - x0)
    sizes = group_sizes(groups, ds, pt_per_d)
    # room at the ends for the outer groups
    if len(ds) > 1:
        half = [group_width(len(groups[d]), *sizes[d][:3]) / 2 / pt_per_d for d in (ds[0], ds[-1])]
        ax.set_xlim(ds[0] - max(0.6, half[0] + 0.15), ds[-1] + max(0.6, half[1] + 0.15))

    def at(points):
        return offset_copy(ax.transData, fig=fig, x=points, y=0, units="points")

    # the target's own quantities, one value per d (they do not depend on the span): a line
    # through the d, under everything; the bounds' markers beside the m* markers
    for key, style in (("head_atoms", dict(color=TERMS_COLOUR, ls="-")),
                       ("ub", dict(color=UB_COLOUR, ls="--")),
                       ("lb", dict(color=LB_COLOUR, ls=":"))):
        pts = [(d, target_value(groups[d], key)) for d in ds]
        pts = [(d, y) for d, y in pts if y is not None]
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        ax.plot(xs, ys, lw=1.4, zorder=2, gid=key + "-line", **style)
        if key == "head_atoms":
            # a dot where no m* marker has the same value (there the line runs through
            # it); a lone d gets a short stroke, as a line of one point shows nothing
            dots = [(d, y) for d, y in pts if all(row_y(r) != y for r in groups[d])]
            if dots:
                ax.plot([p[0] for p in dots], [p[1] for p in dots], ls="none", marker=".", ms=6,
                        zorder=3, color=TERMS_COLOUR, gid=key)
            if len(ds) == 1:
                # a lone d: a faint level across the whole panel, not a short stroke at the
                # d, which read like an error bar's cap (issue 40)
                ax.axhline(ys[0], color=TERMS_COLOUR, ls="-", lw=1.0, alpha=0.45, zorder=1,
                           gid=key + "-level")
            continue
        for d, y in pts:
            ms, bs, gap, bounds = sizes[d]
            if not bounds and any(row_y(r) == y for r in groups[d]):
                crowded = True
                continue  # no room: the line runs through the m* marker of that value
            ub_x, _, lb_x = slot_offsets(len(groups[d]), ms, bs or ms * 0.65, gap)
            hollow = key == "lb"
            ax.plot([d], [y], ls="none", marker="v" if key == "ub" else "^", ms=bs or ms * 0.65,
                    zorder=5, transform=at(ub_x if key == "ub" else lb_x), gid=key,
                    color=style["color"], mfc="white" if hollow else style["color"], mew=1.2)

    # m*: one marker per row at its own slot. An open row shows its known interval LB..UB
    # as a bar, its marker hollow; an infeasible row (no head with keys in its span) has no
    # m*: a hollow diamond at LB with a note.
    for d in ds:
        ms, bs, gap, bounds = sizes[d]
        _, xs, _ = slot_offsets(len(groups[d]), ms, bs, gap)
        for r, dx in zip(groups[d], xs):
            y = row_y(r)
            if y is None:
                continue
            marker = STATUS_MARKERS.get(r["status"], ("x", r["status"]))[0]
            color = span_colour(r["span"])
            hollow = r["status"] in ("open", "infeasible")
            if r["status"] == "open":
                lo, hi = log2_safe(r["lb"]), log2_safe(r["ub"])
                if lo and hi:
                    ax.plot([d, d], [lo, hi], color=color, lw=3, alpha=0.5, zorder=3,
                            transform=at(dx), gid="open-bar")
            if r["status"] == "infeasible":
                ax.annotate(f"none in span {r['span']}", (d, y), xytext=(dx, -ms),
                            textcoords="offset points", ha="center", va="top", fontsize=7,
                            color="0.25", zorder=7, gid="infeasible-note")
            (line,) = ax.plot([d], [y], marker=marker, ms=ms, ls="none", transform=at(dx),
                              mec=color if hollow else "black", mew=1.6 if hollow else 0.8,
                              color="white" if hollow else color, zorder=4,
                              gid="infeasible" if r["status"] == "infeasible" else "mstar")
            line.hf_row, line.hf_point = (r["name"], r["span"]), (d, y)
    return crowded


def font_px(fig):
    """Height of a y tick label's font in pixels."""
    import matplotlib
    from matplotlib.font_manager import FontProperties
    size = FontProperties(size=matplotlib.rcParams["ytick.labelsize"]).get_size_in_points()
    return size * fig.dpi / 72


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
