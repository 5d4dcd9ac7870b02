#!/usr/bin/env python3
"""What the slices certify (docs/math.md §12; docs/performance.md §14, "Slices: what they
certify"): the span-free lower bound of two builds, held against the search.

For each target, `headfuse target --json` of the build BEFORE (a checkout without the
slices) and of the build AFTER give the span-free lower bound (before: the larger of `lb`
and the face accounting's `span_free.lb`; after: `lb`, the best of every rule) and whether
it is certified (`certified`: LB = UB, or a two- or three-dimensional certificate); then
`mpirun -n RANKS AFTER/headfuse search --engine cone` at every span of SPANS gives m*(T, S)
(bench/span_free_3d.py's driver: a search past --timeout seconds decides nothing; one
that fails is run again, twice at most, since a stray signal can stop it on a shared
machine, and counted; one that fails three times is a failure).
Checks, each a failure (exit status 1) when it does not hold:
  - a certified value (of either build) equals the searched m* at every span that holds a
    support;
  - neither build's span-free lower bound exceeds a searched m*;
  - AFTER: `certified` exactly when `lb` = `ub` or a certificate gives m* (then `lb`), and
    `lb` at least the face accounting's `span_free.lb`.
Four sets of targets:
  random  N sums of 3 to 5 two-atom heads on the 13 primitive directions of {-1,0,1}^3
          (bench/span_free_3d.py's, random.seed(SEED): the targets of docs/performance.md
          §14), SPANS;
  blocks  N sums of three one-variable blocks on x1, x2, x3, each block 1 to 3 heads with
          2 or 3 of the keys 0, 1, 2, weights 1..3 and values 0..3 not all equal
          (random.seed(SEED + 1)), BLOCK_SPANS;
  parts   the 3N blocks of the block sums, each alone as a target in one variable, spans 6
          and 8 (a block's keys lie in 0..6);
  mixed   the first N random targets plus a one-variable block as above on x4
          (random.seed(SEED + 2)), four variables, MIXED_SPANS (none by default: no
          search, LB / UB only).
Prints a Markdown row per target (unless --quiet) and a summary per set: targets,
certified before and after, the mean of LB / m* before and after (m* at the largest span
searched that holds a support; for the random set also over the targets with a
full-dimensional Newt(Q), as docs/performance.md §14), how many reach that m*, and the
mean of LB / UB before and after.

  bench/slices_measure.py --before DIR [--build DIR] [--random N] [--blocks N] [--mixed N]
                          [--spans 3-6] [--block-spans 3-5] [--mixed-spans A-B] [--seed S]
                          [--ranks R] [--timeout SECONDS] [--quiet] [--plant]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from span_free_3d import ROOT, parse_spans, random_target, run_search, run_target  # noqa: E402


def block_heads(rng, axis, d):
    """1 to 3 heads on coordinate `axis` of d: 2 or 3 of the keys 0, 1, 2."""
    heads = []
    for _ in range(rng.randint(1, 3)):
        keys = sorted(rng.sample(range(3), rng.randint(2, 3)))
        values = [rng.randint(0, 3) for _ in keys]
        while len(set(values)) == 1:  # a constant head: no block
            values = [rng.randint(0, 3) for _ in keys]
        atoms = []
        for k, v in zip(keys, values):
            key = [0] * d
            key[axis] = k
            atoms.append({"key": key, "weight": str(rng.randint(1, 3)), "value": str(v)})
        heads.append({"atoms": atoms})
    return heads


def blocks_target(rng, index):
    """The target and its three blocks, each alone in one variable."""
    blocks = [block_heads(rng, axis, 3) for axis in range(3)]
    parts = [{"name": "block_%d_x%d" % (index, axis + 1), "d": 1, "dv": 1,
              "heads": [{"atoms": [dict(a, key=[a["key"][axis]]) for a in h["atoms"]]}
                        for h in heads]} for axis, heads in enumerate(blocks)]
    return {"name": "blocks_3d_%d" % index, "d": 3, "dv": 1, "heads": sum(blocks, [])}, parts


def mixed_target(rng, t3, index):
    heads = [{"atoms": [dict(a, key=a["key"] + [0]) for a in h["atoms"]]} for h in t3["heads"]]
    return {"name": "mixed_4d_%d" % index, "d": 4, "dv": 1,
            "heads": heads + block_heads(rng, 3, 4)}


def num(x):
    return int(x) if x is not None else None  # lb and ub are strings from 2^53 on


def bounds(o, after):
    """(span-free LB, certified value or None, full-dimensional in three variables)."""
    sf = o.get("span_free") or {}
    lb = num(o["lb"]) if after else max(num(o["lb"]), num(sf.get("lb", 0)))
    cert = None
    if o["certified"]:
        cert = num(o["m_star_certified"]) if o["m_star_certified"] is not None else num(o["ub"])
    return lb, cert, sf.get("dim") == 3


def measure(a, name, cases, spans, work, failures):
    hb, ha = os.path.join(a.before, "headfuse"), os.path.join(a.build, "headfuse")
    rows = []
    if not a.quiet:
        print("| target | LB before | LB after (rule) | UB | certified before / after | "
              "m* by span (%s) |" % ", ".join(map(str, spans)))
        print("|---|---:|---|---:|---|---|")
    for path in cases:
        ob, oa = run_target(hb, path), run_target(ha, path)
        lbb, certb, full = bounds(ob, False)
        lba, certa, _ = bounds(oa, True)
        lba += 1 if a.plant else 0
        ub = num(oa["ub"])
        t = oa["name"]
        sfa = (oa.get("span_free") or {}).get("lb")
        msc = num(oa["m_star_certified"])
        if oa["certified"] != ((num(oa["lb"]) == ub and oa["ub_exact"]) or msc is not None):
            failures.append("%s: certified %s with lb %s, ub %s" % (t, oa["certified"],
                                                                     oa["lb"], oa["ub"]))
        if msc is not None and msc != num(oa["lb"]):
            failures.append("%s: m* certified %d, lb %s" % (t, msc, oa["lb"]))
        if sfa is not None and num(oa["lb"]) < sfa:
            failures.append("%s: lb %s below the face accounting's %s" % (t, oa["lb"], sfa))
        by_span, last = [], None
        for s in spans:
            row, _ = run_search(ha, path, s, a.ranks, a.timeout, work)
            for _ in range(2):  # a stray signal on a shared machine: run it again
                if row != "error":
                    break
                a.reruns += 1
                row, _ = run_search(ha, path, s, a.ranks, a.timeout, work)
            if row is None:
                by_span.append("timeout")
                continue
            if row == "error":
                by_span.append("error")
                failures.append("%s span %d: the search failed" % (t, s))
                continue
            m = row["m_star"]
            by_span.append("-" if m is None else str(m))
            if m is None:
                continue
            last = m
            for which, lb, cert in (("before", lbb, certb), ("after", lba, certa)):
                if lb > m:
                    failures.append("%s span %d: span-free LB %s %d > m* %d" % (t, s, which,
                                                                               lb, m))
                if cert is not None and cert != m:
                    failures.append("%s span %d: certified %s %d, m* %d" % (t, s, which,
                                                                           cert, m))
        rows.append({"lbb": lbb, "lba": lba, "ub": ub, "certb": certb is not None,
                     "certa": certa is not None, "full": full, "m": last,
                     "rule": oa["lb_rule"], "timeouts": by_span.count("timeout")})
        if not a.quiet:
            print("| %s | %d | %d (%s) | %d | %s / %s | %s |" % (
                t, lbb, lba, oa["lb_rule"], ub, "yes" if certb is not None else "no",
                "yes" if certa is not None else "no", " / ".join(by_span) or "not run"))
        sys.stdout.flush()

    def summary(label, rs):
        n = len(rs)
        cb, ca = sum(r["certb"] for r in rs), sum(r["certa"] for r in rs)
        print("%s %s: %d targets, certified %d before, %d after; %d with a higher LB; "
              "mean LB / UB %.4f before, %.4f after" % (
                  name, label, n, cb, ca, sum(r["lba"] > r["lbb"] for r in rs),
                  sum(r["lbb"] / r["ub"] for r in rs) / max(1, n),
                  sum(r["lba"] / r["ub"] for r in rs) / max(1, n)))
        ms = [r for r in rs if r["m"]]
        if ms:
            print("%s %s: mean LB / m* over %d targets with a support: %.4f before, "
                  "%.4f after; LB = m* on %d before, %d after" % (
                      name, label, len(ms), sum(r["lbb"] / r["m"] for r in ms) / len(ms),
                      sum(r["lba"] / r["m"] for r in ms) / len(ms),
                      sum(r["lbb"] == r["m"] for r in ms), sum(r["lba"] == r["m"] for r in ms)))

    print()
    summary("(all)", rows)
    if name == "random":
        summary("(full-dimensional Newt(Q))", [r for r in rows if r["full"]])
        summary("(not full-dimensional)", [r for r in rows if not r["full"]])
    rules = {}
    for r in rows:
        rules[r["rule"]] = rules.get(r["rule"], 0) + 1
    print("%s: the rule of LB after: %s; searches stopped at the timeout: %d" % (
        name, ", ".join("%s %d" % kv for kv in sorted(rules.items())),
        sum(r["timeouts"] for r in rows)))
    print()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="build directory without the slices")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--random", type=int, default=100)
    ap.add_argument("--blocks", type=int, default=30)
    ap.add_argument("--mixed", type=int, default=30)
    ap.add_argument("--spans", default="3-6")
    ap.add_argument("--block-spans", default="3-5")
    ap.add_argument("--mixed-spans", default="")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--plant", action="store_true",
                    help="test only: claim one key more than the span-free lower bound "
                    "after, which the checks must refute")
    a = ap.parse_args()
    a.reruns = 0
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    work = tempfile.mkdtemp(prefix="hf-slices-measure.")

    def write(t):
        path = os.path.join(work, t["name"] + ".json")
        with open(path, "w") as f:
            json.dump(t, f)
        return path

    rng = random.Random(a.seed)
    t3 = [random_target(rng, i) for i in range(max(a.random, a.mixed))]
    rb, rm = random.Random(a.seed + 1), random.Random(a.seed + 2)
    bt = [blocks_target(rb, i) for i in range(a.blocks)]
    sets = [("random", [write(t) for t in t3[:a.random]], parse_spans(a.spans)),
            ("blocks", [write(t) for t, _ in bt], parse_spans(a.block_spans)),
            ("parts", [write(p) for _, ps in bt for p in ps], [6, 8]),
            ("mixed", [write(mixed_target(rm, t, i)) for i, t in enumerate(t3[:a.mixed])],
             parse_spans(a.mixed_spans))]
    failures = []
    for name, cases, spans in sets:
        if cases:
            measure(a, name, cases, spans, work, failures)
    print("searches run again after a failure: %d" % a.reruns)
    for msg in failures:
        print("FAIL: " + msg)
    subprocess.run(["rm", "-rf", work])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
