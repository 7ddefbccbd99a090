#!/usr/bin/env python3
"""Fits approx-v2's weights (engine/token/counter.cpp, kWeights).

    build/bench/bench_tokens --features > /tmp/features.csv
    python3 bench/tokens/fit.py /tmp/features.csv

Minimises the squared relative error of every chunk, each text kind weighed
equally (a kind's chunks share 1 / chunks), with weights >= 0, by
coordinate descent on the normal equations (no numpy needed). The features
absent from the corpus keep the hand-set weights of FIXED. Prints the
weights in milli-tokens and the per-kind error they give.
"""
import csv
import sys
from collections import defaultdict

# Not in the corpus (or too rare to fit): milli-tokens set from sentences
# measured by hand with exact.mjs (Russian, Greek, German, Korean, emoji).
FIXED = {"x_letters": 250, "hangul": 700, "emoji": 1100}


def main(path):
    rows = list(csv.DictReader(open(path)))
    names = [k for k in rows[0] if k not in ("kind", "exact")]
    free = [n for n in names if n not in FIXED]
    per_kind = defaultdict(int)
    for r in rows:
        per_kind[r["kind"]] += 1
    # Normal equations of  sum_r a_r * ((x.f_r + c_r) / e_r - 1)^2.
    n = len(free)
    ata = [[0.0] * n for _ in range(n)]
    atb = [0.0] * n
    for r in rows:
        e = float(r["exact"])
        a = 1.0 / per_kind[r["kind"]]
        f = [float(r[k]) / e for k in free]
        target = 1.0 - sum(FIXED[k] / 1000 * float(r[k]) for k in FIXED) / e
        for i in range(n):
            atb[i] += a * f[i] * target
            for j in range(n):
                ata[i][j] += a * f[i] * f[j]
    x = [0.0] * n
    for _ in range(20000):
        for i in range(n):
            if ata[i][i] == 0:
                continue
            g = atb[i] - sum(ata[i][j] * x[j] for j in range(n) if j != i)
            x[i] = max(0.0, g / ata[i][i])
    weights = dict(FIXED)
    weights.update({k: round(v * 1000) for k, v in zip(free, x)})
    for k in names:
        print(f"  {k:14s} {weights[k]:6d}")
    errs = defaultdict(list)
    for r in rows:
        milli = sum(weights[k] * int(r[k]) for k in names)
        est = 1 if milli < 1500 else (milli + 500) // 1000
        e = int(r["exact"])
        errs[r["kind"]].append((est - e) / e)
    print(f"\n  {'kind':18s} {'signed':>8s} {'abs':>8s}")
    for kind, v in errs.items():
        print(f"  {kind:18s} {100 * sum(v) / len(v):+7.1f}% {100 * sum(map(abs, v)) / len(v):7.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
