#!/usr/bin/python3
"""Join the outputs of scaling_record run side by side with K/N (one workload file).

    bench/scaling_merge.py [--profile-step S] PART0.txt PART1.txt ... > workload.txt

--profile-step S keeps a unit's profile points at least S seconds apart (the recorder
writes one every 10 ms; the committed workload keeps one every 40 ms, a quarter of the
lines; 2.957 s against 2.963 s simulated at 1024 ranks: docs/performance.md §10).

Keeps the sizes whose units are all recorded (over the parts), so a recording stopped by hand gives the sizes decided so far: the
replay then decides those sizes only, like --max-atoms. Every part prepared every size, as
every rank does: the one-time preparation is the mean over the parts, a size's preparation
(its SECONDS and its rounds: x, s and their p lines) is part 0's, so that what it holds
besides its rounds (the serial rest every rank replays) is one process's, not the noise
between two (the mean of the parts' SECONDS less part 0's rounds was up to 0.23 s "serial"
per size, against 1-3 ms measured); each unit keeps the p lines (its profile) of the part
that ran it."""
import sys


def read(path):
    comments, prepare, sizes, end, cur = [], 0.0, [], None, None
    last = None  # where p lines go: the prep list or a unit's own
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0].startswith("#"):
            comments.append(line.rstrip("\n"))
        elif f[0] == "prepare":
            prepare = float(f[1])
        elif f[0] == "size":
            cur = {"m": int(f[1]), "n": int(f[2]), "level": float(f[3]), "units": {}, "prep": []}
            sizes.append(cur)
        elif f[0] in ("x", "s"):
            cur["prep"].append(line.rstrip("\n"))
            last = None
        elif f[0] == "p":
            if last is None:
                cur["prep"].append(line.rstrip("\n"))
            else:
                last.append(line.rstrip("\n"))
        elif f[0] == "u":
            last = []
            cur["units"][int(f[1])] = (line.split(None, 2)[2].rstrip("\n"), last)
        elif f[0] == "end":
            end = f
    return comments, prepare, sizes, end


def thin(lines, step):
    """Profile lines (p CELL SECONDS) at least step seconds apart."""
    out, last = [], 0.0
    for line in lines:
        t = float(line.split()[2])
        if t - last >= step:
            out.append(line)
            last = t
    return out


args = sys.argv[1:]
step = 0.0
if args[:1] == ["--profile-step"]:
    step, args = float(args[1]), args[2:]
parts = [read(p) for p in args]
if not parts:
    sys.exit(__doc__)
print(f"# joined by bench/scaling_merge.py from {len(parts)} parts")
for c in parts[0][0]:
    print(c)
print(f"prepare {sum(p[1] for p in parts) / len(parts):.6f}")
nsizes = 0
while all(len(p[2]) > nsizes for p in parts) and len(
        set().union(*(p[2][nsizes]["units"] for p in parts))) == parts[0][2][nsizes]["n"]:
    nsizes += 1
units = found = 0
total = sum(p[1] for p in parts) / len(parts)
m_star = -1
for i in range(nsizes):
    sz = [p[2][i] for p in parts]
    m, n = sz[0]["m"], sz[0]["n"]
    assert all(s["m"] == m and s["n"] == n for s in sz), "parts disagree on size %d" % m
    level = sz[0]["level"]
    print(f"size {m} {n} {level:.6f}")
    prof = []
    for line in sz[0]["prep"] + ["x"]:  # a sub-unit's p lines follow its s line
        if line.startswith("p "):
            prof.append(line)
            continue
        for p in thin(prof, step) if step else prof:
            print(p)
        prof = []
        if line != "x":
            print(line)
    total += level
    merged = {}
    for s in sz:
        merged.update(s["units"])
    assert len(merged) == n, "size %d: %d of %d units recorded" % (m, len(merged), n)
    for u in range(n):
        rest, prof = merged[u]
        print(f"u {u} {rest}")
        for p in thin(prof, step) if step else prof:
            print(p)
        sec, _, fnd = rest.split()[:3]  # POLLS and CELLS may follow
        total += float(sec)
        found += int(fnd)
    units += n
    if found:
        m_star = m
        break
if m_star < 0 and not all(p[3] for p in parts):
    print(f"# recording stopped by hand: sizes up to {parts[0][2][nsizes - 1]['m']} are decided")
print(f"end {m_star} {units} {total:.6f}")
