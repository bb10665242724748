#!/usr/bin/env python3
"""What the stored maps cost: time, bytes per pair, and peak memory at two dataset
sizes (memory must stay flat in N).

  /usr/bin/python3 bench/maps_cost_bench.py [--build build] [--model DIR] [--rows 500,2000] [-n 1]
      [--dataset ../shared/datasets/stsb/sts-train.csv] [--variants plain,value_norms,rollout,both]

Runs `attnscan run` on the first N pairs of STS-B train (configs/stsb-raw.yaml: the seven detectors,
fp16 attention of every pair) with no map stored (plain) and with each variant (value_norms, rollout,
both, value_zeroing, alti), alternating, each configuration -n times (medians). Prints per run: wall and CPU seconds (os.wait4 of the child), peak
RSS, and the bytes each column holds per pair (its extent in the file / pairs); then the cost of
each column against the plain run of the same N, and the RSS growth from the smaller N to the larger.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VARIANTS = {"plain": [], "value_norms": ["output.value_norms=true"], "rollout": ["output.rollout=true"],
            "both": ["output.value_norms=true", "output.rollout=true"],
            "value_zeroing": ["output.value_zeroing=true"], "alti": ["output.alti=true"]}
COLUMNS = {"attention": "attention/values", "value_norms": "tokens/value_norm", "rollout": "rollout/values",
           "value_zeroing": "value_zeroing/values", "alti": "alti/values", "alti_rollout": "alti_rollout/values"}


def run_once(binary, model, dataset, rows, sets, out):
    args = [binary, "run", "-c", "configs/stsb-raw.yaml", "--set", "dataset.path=" + dataset,
            "--set", f"dataset.max_rows={rows}", "-o", out, "--overwrite", "--no-progress"]
    if model:
        args += ["--model", model]
    for s in sets:
        args += ["--set", s]
    t0 = time.perf_counter()
    child = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    err = child.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"attnscan run failed:\n{err}")
    with h5py.File(out, "r") as f:
        pairs = len(f["examples/index"])
        sizes = {k: f[v].size * f[v].dtype.itemsize / pairs for k, v in COLUMNS.items() if v in f}  # values held
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024, "pairs": pairs,
            "file": os.path.getsize(out) / pairs, **{"bytes_" + k: v for k, v in sizes.items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model", default="", help="model folder (default: the config's, i.e. ATTNSCAN_MODEL or the cache)")
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "stsb", "sts-train.csv"))
    ap.add_argument("--rows", default="500,2000", help="two dataset sizes, comma-separated")
    ap.add_argument("-n", type=int, default=1, help="repetitions of each configuration (medians)")
    ap.add_argument("--variants", default="plain,value_norms,rollout,both",
                    help="comma-separated, from " + ", ".join(VARIANTS) + " (plain is always run)")
    a = ap.parse_args()
    variants = ["plain"] + [v for v in a.variants.split(",") if v != "plain"]
    for v in variants:
        if v not in VARIANTS:
            sys.exit(f"--variants: unknown '{v}' (expected {', '.join(VARIANTS)})")
    if not os.path.exists(a.dataset):
        sys.exit(f"dataset not found: {a.dataset} (../shared/datasets)")
    binary = os.path.join(a.build, "pipeline", "attnscan")
    sizes = [int(x) for x in a.rows.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.n):
            for rows in sizes:
                for name in variants:
                    sets = VARIANTS[name]
                    r = run_once(binary, a.model, a.dataset, rows, sets, os.path.join(tmp, f"{name}.h5"))
                    results.setdefault((rows, name), []).append(r)
                    print(f"  run {rep + 1}/{a.n}: {rows} rows, {name}: {r['wall']:.2f} s", file=sys.stderr, flush=True)
    med = {key: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for key, runs in results.items()}
    print(f"model {a.model or '(config default)'}; dataset {a.dataset}; medians of {a.n}; bytes per pair: the "
          "whole file, and the values each column holds (attention fp16, value norms and rollout float32)\n")
    print(f"{'rows':>6} {'columns':<13} {'wall s':>7} {'CPU s':>7} {'RSS MiB':>8} {'file B/pair':>12} "
          + "".join(f"{c:>14}" for c in COLUMNS) + f" {'wall vs plain':>14} {'ms/pair':>8}")
    for rows in sizes:
        plain = med[(rows, "plain")]
        for name in variants:
            m = med[(rows, name)]
            print(f"{int(m['pairs']):>6} {name:<13} {m['wall']:>7.2f} {m['cpu']:>7.2f} {m['rss']:>8.0f} {m['file']:>12.0f} "
                  + "".join(f"{m.get('bytes_' + c, 0):>14.0f}" for c in COLUMNS)
                  + f" {m['wall'] / plain['wall']:>13.3f}x {1000 * m['wall'] / m['pairs']:>8.1f}")
    print("\npeak RSS growth from the smaller to the larger N (flat in N: near 0):")
    for name in variants:
        lo, hi = med[(sizes[0], name)]["rss"], med[(sizes[-1], name)]["rss"]
        print(f"  {name:<12} {lo:.0f} -> {hi:.0f} MiB ({(hi / lo - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
