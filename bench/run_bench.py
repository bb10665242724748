#!/usr/bin/env python3
"""End-to-end benchmark of `attnscan run` on STS-B train (5,749 pairs) with the default model.

  bench/run_bench.py [--build build] [--dataset ../shared/datasets/stsb/sts-train.csv]

Prints, from one run of each on this machine:
  - forward-only pairs/s (bench/dataset_forward_bench: same tokenization, blocks and batches, only
    Transformer::forward timed, best of 1x2 and 2x1 streams x threads);
  - end-to-end pairs/s of `attnscan run` (whole process wall time: model load, hashing, the
    tokenizing pre-pass, reading, forward, fp16 storage uncompressed, commits, finishing) and its
    share of the forward-only rate (target >= 85%);
  - peak RSS of `attnscan run` on the first 1,000 pairs and on all pairs (target: < 10% growth), and
    on the file twice over (same lengths, twice the pairs).
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def run_attnscan(binary, dataset, out, max_rows):
    args = [binary, "run", "-c", "configs/stsb-raw.yaml", "--set", "dataset.path=" + dataset,
            "--set", f"dataset.max_rows={max_rows}", "-o", out, "--overwrite", "--no-progress"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"attnscan run failed:\n{p.stderr}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, max over children so far
    pairs = int(re.search(r"pairs written (\d+)", p.stderr).group(1))
    return pairs, wall, rss, before


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "stsb", "sts-train.csv"))
    a = ap.parse_args()
    if not os.path.exists(a.dataset):
        sys.exit(f"dataset not found: {a.dataset}")
    binary = os.path.join(a.build, "pipeline", "attnscan")
    fwd = subprocess.run([os.path.join(a.build, "bench", "dataset_forward_bench"), a.dataset, "5", "6"],
                         capture_output=True, text=True, check=True).stdout
    print(fwd.strip())
    forward = float(re.search(r"forward-only best: ([\d.]+)", fwd).group(1))
    with tempfile.TemporaryDirectory() as tmp:
        twice = os.path.join(tmp, "twice.csv")  # the same rows twice: same lengths, double the count
        with open(a.dataset, "rb") as src, open(twice, "wb") as dst:
            data = src.read()
            dst.write(data + (b"" if data.endswith(b"\n") else b"\n") + data)
        # Peak RSS needs a fresh process tree per measurement: measure the small run in a child.
        small = subprocess.run([sys.executable, __file__, "--rss-only", binary, a.dataset, os.path.join(tmp, "s.h5"), "1000"],
                               capture_output=True, text=True, check=True).stdout.split()
        full = subprocess.run([sys.executable, __file__, "--rss-only", binary, a.dataset, os.path.join(tmp, "f.h5"), "0"],
                              capture_output=True, text=True, check=True).stdout.split()
        double = subprocess.run([sys.executable, __file__, "--rss-only", binary, twice, os.path.join(tmp, "d.h5"), "0"],
                                capture_output=True, text=True, check=True).stdout.split()
    pairs, wall, rss_full = int(full[0]), float(full[1]), int(full[2])
    rss_small = int(small[2])
    e2e = pairs / wall
    print(f"end-to-end: {pairs} pairs in {wall:.2f} s = {e2e:.1f} pairs/s "
          f"({100 * e2e / forward:.1f}% of forward-only {forward:.1f}; target >= 85%)")
    print(f"peak RSS: {rss_small / 1024:.0f} MiB for 1,000 pairs, {rss_full / 1024:.0f} MiB for {pairs} pairs "
          f"(growth {100 * (rss_full - rss_small) / rss_small:+.1f}%; target < 10%)")
    rss_double = int(double[2])
    print(f"peak RSS: {rss_double / 1024:.0f} MiB for the file twice ({double[0]} pairs): "
          f"{100 * (rss_double - rss_full) / rss_full:+.1f}% against all pairs once "
          f"(the first 1,000 rows are short captions; later rows are up to 10x longer)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--rss-only":
        binary, dataset, out, rows = sys.argv[2:6]
        pairs, wall, rss, _ = run_attnscan(binary, dataset, out, int(rows))
        print(pairs, wall, rss)
    else:
        main()
