#!/usr/bin/env python3
"""Peak memory and time of the Python reader's long frames on a result file.

  /usr/bin/python3 bench/frame_bench.py RESULT.h5 [--ref-python OTHER/python] [--rows 10000]

Each measurement runs in a fresh interpreter (peak RSS from its own ru_maxrss, the h5py and pandas
imports included): `scores_frame()` of every output, and `iter_scores_frames(rows=...)` summed piece by
piece. With --ref-python, the same `scores_frame()` through another copy of the package (e.g. the
python/ folder of an earlier checkout), for before/after in one invocation.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

PROBE = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import attnscan
import pandas  # noqa: F401  (imported before the baseline, as scores_frame() imports it)
path, what, rows = sys.argv[2], sys.argv[3], int(sys.argv[4])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
with attnscan.open(path) as r:
    if what == "frame":
        frame = r.scores_frame()
        count, total = len(frame), float(frame["score"].sum())
    else:
        count, total = 0, 0.0
        for piece in r.iter_scores_frames(rows=rows):
            count += len(piece)
            total += float(piece["score"].sum())
seconds = time.perf_counter() - t0
print(json.dumps({"rows": count, "score_sum": total, "seconds": seconds,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "after_imports_mib": before / 1024}))
"""


def measure(package_dir, path, what, rows):
    out = subprocess.run([sys.executable, "-c", PROBE, package_dir, path, what, str(rows)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"frame_bench: {what} through {package_dir} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--ref-python", default=None, help="another copy of the attnscan package's folder")
    ap.add_argument("--rows", type=int, default=10000, help="examples per piece of iter_scores_frames")
    a = ap.parse_args()
    runs = [("scores_frame()", os.path.join(ROOT, "python"), "frame"),
            (f"iter_scores_frames(rows={a.rows})", os.path.join(ROOT, "python"), "pieces")]
    if a.ref_python:
        runs.append(("ref scores_frame()", os.path.abspath(a.ref_python), "frame"))
    print(f"{a.path}")
    print(f"{'what':<32} {'rows':>12} {'seconds':>8} {'peak MiB':>9} {'bytes/row over imports':>23}")
    for name, package, what in runs:
        m = measure(package, a.path, what, a.rows)
        per_row = (m["peak_mib"] - m["after_imports_mib"]) * 1024 * 1024 / max(1, m["rows"])
        print(f"{name:<32} {m['rows']:>12,} {m['seconds']:>8.2f} {m['peak_mib']:>9.0f} {per_row:>23.1f}")


if __name__ == "__main__":
    main()
