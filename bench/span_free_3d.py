#!/usr/bin/env python3
"""The span-free face accounting on three-variable targets, held against the search
(docs/math.md §11; docs/performance.md §14).

For each target: `headfuse target --json` gives the bounds module's lower bound (the
Newton-vertex bound and the face rule: "before"), the face accounting's span-free lower
bound ("after": the larger of the two) and, when it certifies, m* over all integer keys.
Then `mpirun -n RANKS headfuse search --engine cone` at every span of SPANS gives m*(T, S).
Checks, each a failure (exit status 1) when it does not hold:
  - a certified value equals the searched m* at every span that holds a support;
  - the span-free lower bound never exceeds a searched m*.
Targets: the families at d = 3 (wd, wdw, chain, multi with k = 2..4), every JSON target in
data/ and tests/fixtures/good/ with d = 3, and N random sums of 3 to 5 two-atom heads on
the 13 primitive directions of {-1,0,1}^3 (weights and values 1..3, Python's
random.seed(SEED)). Prints a Markdown table per target and a summary: the share
certified, and the mean of LB / m* before and after, m* taken at the largest span searched
that holds a support.

  bench/span_free_3d.py [--build DIR] [--spans 3-6] [--random N] [--seed S] [--ranks R]
                        [--timeout SECONDS] [--no-families] [--quiet] [--plant]

A search past --timeout seconds is stopped and counted as not run (it decides nothing);
MAX_SPAN caps the spans of the largest families. A search that fails is a failure.
"""
import argparse
import glob
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, -1, 0), (0, 1, 1), (0, 1, -1),
        (1, 0, 1), (1, 0, -1), (1, 1, 1), (1, 1, -1), (1, -1, 1), (-1, 1, 1)]
FAMILIES = ["wd:d=3", "wdw:d=3", "chain:d=3", "multi:d=3,k=2", "multi:d=3,k=3",
            "multi:d=3,k=4"]
# Largest span searched, where the cone grows too large for a shared 2-core machine
# (multi:d=3,k=3 has 64 unknowns at span 5, half a gigabyte a rank; 125 at span 6).
MAX_SPAN = {"multi:d=3,k=3": 4, "multi:d=3,k=4": 5}


def random_target(rng, index):
    """A sum of 3 to 5 two-atom heads (0, w0, 0), (u, w1, v1), keys shifted to >= 0."""
    heads = []
    for _ in range(rng.randint(3, 5)):
        u = DIRS[rng.randint(0, 12)]
        w0, w1, v1 = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
        k0 = [max(0, -x) for x in u]
        k1 = [max(0, x) for x in u]
        heads.append({"atoms": [{"key": k0, "weight": str(w0), "value": "0"},
                                {"key": k1, "weight": str(w1), "value": str(v1)}]})
    return {"name": "random_3d_%d" % index, "d": 3, "dv": 1, "heads": heads}


def target_args(case):
    return ["--family", case] if ":" in case else [case]


def run_target(hf, case):
    out = subprocess.run([hf, "target"] + target_args(case) + ["--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def run_search(hf, case, span, ranks, timeout, work):
    h5 = os.path.join(work, "r.h5")
    subprocess.run(["rm", "-rf", h5, h5 + ".shards"])  # a stopped search leaves its shards
    cmd = ["mpirun", "--oversubscribe", "-n", str(ranks), hf, "search"] + target_args(case) + [
        "--span", str(span), "--engine", "cone", "--out", h5, "--force", "--quiet", "--json"]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)  # mpirun and its ranks: their own process group
        p.communicate()
        return None, time.time() - t0
    if p.returncode != 0:
        sys.stderr.write("%s: exit %d: %s\n" % (" ".join(cmd), p.returncode, err))
        return "error", time.time() - t0
    row = json.loads(out.strip().splitlines()[-1])
    return row, time.time() - t0


def parse_spans(text):
    """"3-6" -> [3, 4, 5, 6], "4" -> [4], "" -> []."""
    if not text:
        return []
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--spans", default="3-6")
    ap.add_argument("--random", type=int, default=100)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--no-families", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--plant", action="store_true",
                    help="test only: claim one key more than the span-free lower bound, "
                    "which the checks must refute (tests/cli/bench_span_free_3d.sh)")
    a = ap.parse_args()
    spans = parse_spans(a.spans)
    hf = os.path.join(a.build, "headfuse")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    work = tempfile.mkdtemp(prefix="hf-span-free-3d.")

    cases = [] if a.no_families else list(FAMILIES)
    for path in sorted(glob.glob(os.path.join(ROOT, "data", "*.json")) +
                       glob.glob(os.path.join(ROOT, "tests", "fixtures", "good", "*.json"))):
        with open(path) as f:
            if json.load(f).get("d") == 3:
                cases.append(path)
    rng = random.Random(a.seed)
    for i in range(a.random):
        path = os.path.join(work, "random_%d.json" % i)
        with open(path, "w") as f:
            json.dump(random_target(rng, i), f)
        cases.append(path)

    failures, rows = [], []
    print("| target | LB before | span-free LB | certified | m* by span (%s) | weakest |"
          % ", ".join(map(str, spans)))
    print("|---|---|---|---|---|---|")
    for case in cases:
        o = run_target(hf, case)
        sf = o.get("span_free") or {}
        before = o["lb"]
        after = max(before, sf.get("lb", before)) if sf.get("dim") == 3 else before
        after += 1 if a.plant else 0
        cert = o["m_star_certified"] if o.get("certified_rule") == "newton_3d" else None
        by_span, last = [], None
        for s in spans:
            if s > MAX_SPAN.get(case, s):
                by_span.append("not run")
                continue
            row, secs = run_search(hf, case, s, a.ranks, a.timeout, work)
            if row is None:
                by_span.append("timeout")
                continue
            if row == "error":
                by_span.append("error")
                failures.append("%s span %d: the search failed" % (o["name"], s))
                continue
            m = row["m_star"]
            by_span.append("-" if m is None else str(m))
            if m is None:
                continue
            last = m
            if after > m:
                failures.append("%s span %d: span-free LB %d > m* %d" % (o["name"], s, after, m))
            if cert is not None and m != cert:
                failures.append("%s span %d: certified %d, m* %d" % (o["name"], s, cert, m))
        name = o["name"] if ":" in case or case.startswith(work) else os.path.relpath(case, ROOT)
        shares = before
        if sf.get("dim") == 3:  # the lower bound the shares alone give (certify3d.c)
            own = sf["shares_at_least"]
            shares = max(before, min(sf["supp_q"], own) if sf["supp_q_feasible"] else own)
        rows.append((o["name"], sf.get("dim") == 3, before, after, cert, last, shares, by_span))
        if not a.quiet or not o["name"].startswith("random_3d"):
            print("| %s | %d | %s | %s | %s | %s |" % (
                name, before, after if sf.get("dim") == 3 else "n/a",
                cert if cert is not None else "no", " / ".join(by_span),
                sf.get("weakest", "-")))
        sys.stdout.flush()

    rnd = [r for r in rows if r[0].startswith("random_3d")]
    applied = [r for r in rnd if r[1]]
    measured = [r for r in applied if r[5]]
    cert = [r for r in applied if r[4] is not None]
    print()
    print("random targets: %d, %d with a full-dimensional Newt(Q), %d certified (%.1f %%)" % (
        len(rnd), len(applied), len(cert), 100.0 * len(cert) / max(1, len(applied))))
    if measured:
        b = sum(r[2] / r[5] for r in measured) / len(measured)
        s = sum(r[6] / r[5] for r in measured) / len(measured)
        f = sum(r[3] / r[5] for r in measured) / len(measured)
        print("mean LB / m* over %d targets with a support (m* at the largest span): "
              "%.4f before (Newton vertices), %.4f with the shares alone, %.4f after "
              "(shares and zone count)" % (len(measured), b, s, f))
        print("certified by the shares alone: %d" % sum(
            1 for r in applied if r[4] is not None and r[6] >= r[4]))
    timeouts = sum(1 for r in rows for m in r[7] if m == "timeout")
    print("searches stopped at the timeout: %d" % timeouts)
    for msg in failures:
        print("FAIL: " + msg)
    subprocess.run(["rm", "-rf", work])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
