#!/usr/bin/env python3
"""Cost of the seven built-in detectors on STS-B train (5,749 pairs) with the default model.

  bench/detector_bench.py [--build build] [--dataset ../shared/datasets/stsb/sts-train.csv] [--repeat 2]

Runs `attnscan run` end to end without detectors, with all seven in worker processes
(pipeline.detector_isolation: all) and with all seven in the main process (none; the default, plugins,
runs attnscan's own detectors there too), fp16
attention stored in all three, best of --repeat runs each; prints the detectors' share of the
end-to-end time (target < 10%) and the cost of isolating them.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DETECTORS = "next_token,prev_token,same_sentence_match,cross_sentence_match,subword_siblings,delimiter,entropy"


def timed_run(binary, dataset, out, detectors, isolated=True):
    args = [binary, "run", "-c", "configs/stsb-raw.yaml", "--set", "dataset.path=" + dataset, "-o", out,
            "--overwrite", "--no-progress", "--set", "pipeline.detector_isolation=" + ("all" if isolated else "none")]
    if detectors:
        args += ["--set", "detectors=" + detectors]
    t0 = time.perf_counter()
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "stsb", "sts-train.csv"))
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    binary = os.path.join(a.build, "pipeline", "attnscan")
    with tempfile.TemporaryDirectory() as tmp:
        base, with_det, in_process = [], [], []
        for _ in range(a.repeat):  # interleaved, so drifting machine load hits all three
            base.append(timed_run(binary, a.dataset, os.path.join(tmp, "a.h5"), ""))
            with_det.append(timed_run(binary, a.dataset, os.path.join(tmp, "b.h5"), DETECTORS))
            in_process.append(timed_run(binary, a.dataset, os.path.join(tmp, "c.h5"), DETECTORS, isolated=False))
    b, d, i = min(base), min(with_det), min(in_process)
    runs = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    print(f"end-to-end without detectors:          {b:.2f} s (runs: {runs(base)})")
    print(f"end-to-end with all seven, isolated:   {d:.2f} s (runs: {runs(with_det)})")
    print(f"end-to-end with all seven, in process: {i:.2f} s (runs: {runs(in_process)})")
    print(f"detectors' share of end-to-end time: {100 * (d - b) / d:.1f}% isolated, {100 * (i - b) / i:.1f}% in process "
          f"(target < 10%)")
    print(f"cost of isolation: {d - i:+.2f} s ({100 * (d - i) / i:+.1f}% of the in-process run)")


if __name__ == "__main__":
    main()
