#!/usr/bin/env python3
"""Does bf16 change what a study concludes? fp32 and bf16 runs of the same pairs, timed, and compared
head by head.

  /usr/bin/python3 bench/bf16_conclusions.py [--rows 2000] [--dataset ../shared/datasets/paws/test.tsv]
      [--model DIR] [--build build] [-n 1] [--out-dir DIR]

Both runs are bench/compare_bench.py's run (all seven detectors, fp16 attention of every pair), the one
with `--set engine.precision=bf16`, alternated -n times. Printed: each run's median wall, CPU and peak
RSS and the fp32/bf16 wall ratio; then for every detector output: whether the top-5 heads by mean score
are the same heads (and in the same order), the largest change of a head's mean score as a fraction of
fp32's 95% CI half-width (the CI `attnscan heads` reports, stored in the file), and Spearman's rho of
the head means. Needs a CPU that runs bf16 (`attnscan info`).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_bench import CACHE, ROOT, timed, write_run_config  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "python"))
import attnscan  # noqa: E402

TOP = 5


def ranks(x):
    """Average ranks (ties share theirs), as Spearman's rho needs."""
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x), dtype=np.float64)
    r[order] = np.arange(len(x), dtype=np.float64)
    for v in np.unique(x):
        tied = x == v
        r[tied] = r[tied].mean()
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / np.sqrt((ra * ra).sum() * (rb * rb).sum()))


def top_heads(mean):
    flat = np.nan_to_num(mean.ravel(), nan=-np.inf)
    order = np.argsort(-flat, kind="stable")[:TOP]
    return [divmod(int(i), mean.shape[1]) for i in order]


def compare(fp32_path, bf16_path):
    """One row per output: key, same top-5 set, same order, max |change| / CI half-width, rho."""
    rows = []
    with attnscan.open(fp32_path) as a, attnscan.open(bf16_path) as b:
        if list(a.ids()) != list(b.ids()):
            sys.exit("bf16_conclusions: the two runs hold different pairs")
        for key in a.outputs:
            ga, gb = a.aggregates(key), b.aggregates(key)
            ma, mb = ga["mean"].astype(np.float64), gb["mean"].astype(np.float64)
            half = (ga["ci_high"].astype(np.float64) - ga["ci_low"].astype(np.float64)) / 2
            ok = np.isfinite(ma) & np.isfinite(mb) & (half > 0)
            change = np.abs(mb - ma)[ok] / half[ok]
            ta, tb = top_heads(ma), top_heads(mb)
            rows.append((key, set(ta) == set(tb), ta == tb, float(change.max()) if change.size else float("nan"),
                         spearman(ma[ok], mb[ok])))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("ATTNSCAN_MODEL") or os.path.join(CACHE, "models", "all-MiniLM-L6-v2"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "paws", "test.tsv"))
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("-n", type=int, default=1, help="repetitions of each run (medians printed)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out-dir", default=None)
    a = ap.parse_args()
    binary = os.path.join(a.build, "pipeline", "attnscan")
    info = subprocess.run([binary, "info"], capture_output=True, text=True, check=True).stdout
    print(info.strip())
    if "bf16: native" not in info and "bf16: emulated" not in info:
        sys.exit("bf16_conclusions: this CPU does not run bf16 (see `attnscan info`)")
    out_dir = a.out_dir or tempfile.mkdtemp(prefix="bf16_conclusions_")
    os.makedirs(out_dir, exist_ok=True)
    config = write_run_config(os.path.join(out_dir, "run.yaml"), os.path.abspath(a.model), os.path.abspath(a.dataset),
                              True, 1, 2, a.rows)
    runs = {"fp32": [], "bf16": []}
    for rep in range(a.n):
        for precision in runs:
            out = os.path.join(out_dir, f"{precision}.h5")
            wall, cpu, rss = timed([binary, "run", "-c", config, "-o", out, "--overwrite", "--no-progress",
                                    "--set", f"engine.precision={precision}"], os.path.join(out_dir, f"{precision}.log"))
            runs[precision].append((wall, cpu, rss))
            print(f"rep {rep + 1}/{a.n} {precision}: wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak RSS {rss / 1024:5.0f} MiB",
                  flush=True)
    med = {p: [statistics.median(r[i] for r in v) for i in range(3)] for p, v in runs.items()}
    for p, (wall, cpu, rss) in med.items():
        print(f"{p}: median wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss / 1024:.0f} MiB")
    print(f"wall fp32 / bf16: {med['fp32'][0] / med['bf16'][0]:.2f}x; CPU fp32 / bf16: {med['fp32'][1] / med['bf16'][1]:.2f}x")

    rows = compare(os.path.join(out_dir, "fp32.h5"), os.path.join(out_dir, "bf16.h5"))
    print(f"\n{'output':<44} {'top-5 same':>10} {'in order':>9} {'max change / CI half':>21} {'rho':>8}")
    for key, same, order, change, rho in rows:
        print(f"{key:<44} {str(same):>10} {str(order):>9} {change:21.3f} {rho:8.5f}")
    print(f"\ntop-5 the same heads for {sum(r[1] for r in rows)} of {len(rows)} outputs; largest change "
          f"{max(r[3] for r in rows):.3f} of a CI half-width; smallest rho {min(r[4] for r in rows):.5f}")


if __name__ == "__main__":
    main()
