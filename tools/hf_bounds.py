#!/usr/bin/python3
"""Tabulate and plot the lower and upper bounds of the built-in families against d.

    tools/hf_bounds.py [-o bounds.png] [--families chain,multi,wdw] [--dmin 2] [--dmax 20]
                       [--headfuse PATH] [--max-seconds S] [--no-plot]

Runs `headfuse target --family F:d=N --json` (multi with k = 3) for every family and d,
prints a Markdown table (family, d, LB, the rule that gives LB, UB, seconds of the whole
command) and the slowest row, and draws LB and UB against d on a log2 axis, one panel per
family (matplotlib's Agg backend: no display needed). LB is the best span-free bound that
`headfuse target` reports (the face rule, the Newton polytope of the reduced denominator,
the slices, or the two- and three-dimensional arguments) and UB comes from the product
construction (docs/bounds.md); an inexact UB (the product of head sizes) is marked "<=".

Exit status: 0; 1 when a command failed or a row took longer than --max-seconds; 2 for
bad arguments or no headfuse executable. Needs python3-matplotlib only to draw.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

FAMILY_SPEC = {"chain": "chain:d={d}", "multi": "multi:d={d},k=3", "wdw": "wdw:d={d}",
               "wd": "wd:d={d}"}
# The rule names and their short forms: a copy of HF_RULE_TABLE in include/headfuse/bounds.h
# (tests/python/test_rule_table.py checks that the two agree).
RULE_WORDS = {"trivial": "trivial", "face_rule": "face rule",
              "newton_vertices": "Newton vertices", "disjoint_faces": "disjoint faces",
              "slices": "slices", "end_slices": "end slices",
              "newton_2d": "2-D Newton argument", "newton_3d": "3-D Newton argument"}


def find_headfuse(given):
    """The executable: --headfuse, $HEADFUSE, build/headfuse of this tree, then PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (given, os.environ.get("HEADFUSE"),
                 os.path.join(here, "..", "build", "headfuse"), shutil.which("headfuse")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def big(v):
    """lb/ub/newton_vertices: a JSON number below 2^53, a decimal string above."""
    return None if v is None else int(v)


def measure(headfuse, family, d):
    """One row: run the command, time it, keep the fields of the table."""
    spec = FAMILY_SPEC[family].format(d=d)
    t0 = time.monotonic()
    p = subprocess.run([headfuse, "target", "--family", spec, "--json"], capture_output=True,
                       text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{spec}: exit {p.returncode}: {p.stderr.strip()}")
    o = json.loads(p.stdout)
    return {"family": family, "d": d, "spec": spec, "lb": big(o["lb"]), "lb_rule": o["lb_rule"],
            "newton_vertices": big(o.get("newton_vertices")), "ub": big(o["ub"]),
            "ub_exact": bool(o["ub_exact"]), "seconds": secs}


def markdown(rows):
    lines = ["| family | d | LB | lb_rule | UB | seconds |", "|---|---:|---:|---|---:|---:|"]
    for r in rows:
        ub = str(r["ub"]) if r["ub_exact"] else f"<= {r['ub']}"
        lines.append(f"| {r['family']} | {r['d']} | {r['lb']} | {r['lb_rule']} | {ub} | "
                     f"{r['seconds']:.3f} |")
    return "\n".join(lines)


def plot(rows, out, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, MaxNLocator

    families = list(dict.fromkeys(r["family"] for r in rows))  # in the order measured
    n = len(families)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.4), squeeze=False)
    for k, fam in enumerate(families):
        ax = axes[0][k]
        fr = [r for r in rows if r["family"] == fam]
        rules = list(dict.fromkeys(RULE_WORDS.get(r["lb_rule"], r["lb_rule"]) for r in fr))
        for key, label, style in (("ub", "UB (product construction)",
                                   dict(color="tab:red", ls="--", marker="v")),
                                  ("lb", f"LB ({', '.join(rules)})",
                                   dict(color="tab:blue", ls="-", marker="^", mfc="none"))):
            # d <= 64: every bound is below 3^64 and fits a float
            ax.plot([r["d"] for r in fr], [float(r[key]) for r in fr], label=label, lw=1.4,
                    ms=6, **style)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_locator(LogLocator(base=2, numticks=12))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("d (query dimension)")
        ax.set_ylabel("atoms (log2 axis)")
        ax.set_title(FAMILY_SPEC[fam].split(":")[0] + (" (k = 3)" if fam == "multi" else ""))
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(title or "Lower and upper bounds on the atoms of one fused head", fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default="bounds.png", help="PNG to write (bounds.png)")
    ap.add_argument("--families", default="chain,multi,wdw",
                    help="comma-separated, of " + ", ".join(FAMILY_SPEC) + " (chain,multi,wdw)")
    ap.add_argument("--dmin", type=int, default=2, help="smallest d (2)")
    ap.add_argument("--dmax", type=int, default=20, help="largest d (20)")
    ap.add_argument("--headfuse", help="the headfuse executable ($HEADFUSE, build/headfuse)")
    ap.add_argument("--max-seconds", type=float,
                    help="fail (exit 1) when a row takes longer than this")
    ap.add_argument("--title", help="figure title")
    ap.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    args = ap.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    bad = [f for f in families if f not in FAMILY_SPEC]
    if bad or not families:
        print(f"hf_bounds: --families: unknown {', '.join(bad) or '(none given)'} "
              f"(known: {', '.join(FAMILY_SPEC)})", file=sys.stderr)
        return 2
    if not 1 <= args.dmin <= args.dmax <= 64:
        print(f"hf_bounds: need 1 <= --dmin <= --dmax <= 64, got {args.dmin}, {args.dmax}",
              file=sys.stderr)
        return 2
    headfuse = find_headfuse(args.headfuse)
    if not headfuse:
        print("hf_bounds: no headfuse executable (give --headfuse or set HEADFUSE)",
              file=sys.stderr)
        return 2
    rows = []
    try:
        for fam in families:
            for d in range(args.dmin, args.dmax + 1):
                rows.append(measure(headfuse, fam, d))
    except (RuntimeError, ValueError, KeyError) as e:
        print(f"hf_bounds: {e}", file=sys.stderr)
        return 1
    print(markdown(rows))
    slow = max(rows, key=lambda r: r["seconds"])
    print(f"\nslowest row: {slow['spec']}, {slow['seconds']:.3f} s "
          f"({len(rows)} rows, {sum(r['seconds'] for r in rows):.1f} s in all)")
    if not args.no_plot:
        plot(rows, args.output, args.title)
        print(f"hf_bounds: wrote {args.output}", file=sys.stderr)
    if args.max_seconds is not None and slow["seconds"] > args.max_seconds:
        print(f"hf_bounds: {slow['spec']} took {slow['seconds']:.3f} s, more than "
              f"{args.max_seconds} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
