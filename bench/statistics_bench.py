#!/usr/bin/env python3
"""Time of `attnscan compare` and `attnscan similarity` on a 10k-pair file.

  bench/statistics_bench.py [--build build] [--dataset ../shared/datasets/stsb/sts-train.csv] [--resamples 1000]

Two real runs of 1,000 STS-B train pairs (the model and a copy with perturbed weights, as a fine-tuned model
would be, so that it runs on every CPU; all seven detectors, attention stored for every 10th pair) are repeated to 10,000 pairs (as in bench/report_bench.py). Timed, best of 2: the paired
comparison of the two files (9 outputs x 72 heads, t-tests, sign-flip permutations, BH), the label
comparison (Spearman with the similarity score), and the head similarity over the 1,000 pairs with
attention; baseline in the same run: `attnscan heads`, which reads the same scores once.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "support"))
from harness import fine_tuned_copy, model_dir  # noqa: E402
from report_bench import DETECTORS, ROOT, best_time, sh, tile  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "stsb", "sts-train.csv"))
    ap.add_argument("--resamples", type=int, default=1000)
    a = ap.parse_args()
    binary = os.path.join(a.build, "pipeline", "attnscan")
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        models = {"base": model_dir(), "tuned": fine_tuned_copy(os.path.join(tmp, "tuned-model"))}
        for name, model in models.items():
            small = os.path.join(tmp, f"{name}-1k.h5")
            sh([binary, "run", "-c", "configs/stsb-raw.yaml", "--set", "dataset.path=" + a.dataset,
                "--set", "dataset.max_rows=1000", "--set", "detectors=" + DETECTORS, "--set", "output.attention_every=10",
                "--model", model, "-o", small, "--no-progress"])
            files[name] = os.path.join(tmp, f"{name}-10k.h5")
            tile(small, files[name], 10)
        heads = best_time([binary, "heads", files["base"], "--top", "3"], 2)
        paired = best_time([binary, "compare", files["base"], files["tuned"], "--resamples", str(a.resamples), "--top", "3"], 2)
        label = best_time([binary, "compare", files["base"], "--by", "label", "--top", "3"], 2)
        similarity = best_time([binary, "similarity", files["base"]], 2)
        print(f"10,000 pairs, 9 detector outputs x 72 heads (648 tests), best of 2:")
        print(f"  heads (baseline)                          {heads:7.2f} s")
        print(f"  compare base vs tuned, {a.resamples} sign flips {paired:7.2f} s  ({paired / heads:.1f} x heads)")
        print(f"  compare --by label (Spearman, STS-B score) {label:7.2f} s  ({label / heads:.1f} x heads)")
        print(f"  similarity (1,000 pairs with attention)    {similarity:7.2f} s  ({similarity / heads:.1f} x heads)")


if __name__ == "__main__":
    main()
