#!/usr/bin/env python3
"""Time and HTML size of `attnscan report` on files of 1k, 10k and 100k pairs.

  bench/report_bench.py [--build build] [--dataset ../shared/datasets/stsb/sts-train.csv] [--repeat 3]

The 1k file is a real run (STS-B train, default model, all seven detectors, attention stored for every
10th pair, label = similarity). The 10k and 100k files repeat its rows (h5py; offsets shifted, the
aggregates recomputed), so they have the size and shape of real files of that many pairs: the report's
cost depends on those, not on the sentences. Baseline in the same run: `attnscan heads` on the same file,
which reads the same per-example scores. The HTML size must not grow with the number of pairs.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DETECTORS = "next_token,prev_token,same_sentence_match,cross_sentence_match,subword_siblings,delimiter,entropy"


def sh(args):
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}:\n{p.stderr}")
    return p


def tile(src, dst, times):
    """dst = src's examples repeated `times` times, as one consistent attnscan file."""
    with h5py.File(src, "r") as s, h5py.File(dst, "w") as d:
        for k, v in s.attrs.items():
            d.attrs[k] = v
        n_tokens = len(s["tokens/id"])
        n_values = len(s["attention/values"])
        for name in ("examples", "tokens", "rejects", "attention"):
            d.create_group(name)
            for k, v in s[name].attrs.items():
                d[name].attrs[k] = v
        for group in ("examples", "tokens", "attention"):
            for key, ds in s[group].items():
                data = ds[...]
                if key == "token_offset":
                    data = np.concatenate([data + i * n_tokens for i in range(times)])
                elif key == "attention_offset":
                    data = np.concatenate([np.where(data >= 0, data + i * n_values, -1) for i in range(times)])
                elif key == "index":
                    data = np.concatenate([data + i * (int(data.max()) + 1) for i in range(times)])
                else:
                    data = np.concatenate([data] * times)
                d.create_dataset(f"{group}/{key}", data=data, chunks=True, maxshape=(None,))
                for k, v in ds.attrs.items():
                    d[f"{group}/{key}"].attrs[k] = v
        for key, ds in s["rejects"].items():
            d.create_dataset(f"rejects/{key}", data=ds[...], maxshape=(None,))
        d.create_group("scores")
        for k, v in s["scores"].attrs.items():
            d["scores"].attrs[k] = v
        for key in s["scores"].attrs["outputs"]:
            det = key.split("/")[0]
            if det not in d["scores"]:
                d["scores"].create_group(det)
                for k, v in s[f"scores/{det}"].attrs.items():
                    d[f"scores/{det}"].attrs[k] = v
            g = d.create_group(f"scores/{key}")
            for k, v in s[f"scores/{key}"].attrs.items():
                g.attrs[k] = v
            values = np.concatenate([s[f"scores/{key}/values"][...]] * times)
            g.create_dataset("values", data=values, chunks=(256,) + values.shape[1:], maxshape=(None,) + values.shape[1:])
            g.create_dataset("baseline", data=np.concatenate([s[f"scores/{key}/baseline"][...]] * times), maxshape=(None,))
            with np.errstate(all="ignore"):
                count = np.isfinite(values).sum(0).astype(np.float32)
                mean = np.nanmean(values, 0).astype(np.float32)
                sd = np.nanstd(values, 0, ddof=1).astype(np.float32)
            g["mean"], g["std"], g["count"] = mean, sd, count
            g["ci_low"], g["ci_high"] = mean - 1.96 * sd / np.sqrt(count), mean + 1.96 * sd / np.sqrt(count)
            base = np.broadcast_to(g["baseline"][...].mean(), mean.shape).astype(np.float32)
            g["baseline_mean"] = base
        for k in ("rows_read", "examples_written"):
            d.attrs[k] = int(s.attrs[k]) * times
        d.attrs["examples_truncated"] = int(s.attrs["examples_truncated"]) * times


def best_time(args, repeat):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        sh(args)
        best = min(best or 1e9, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "stsb", "sts-train.csv"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    binary = os.path.join(a.build, "pipeline", "attnscan")
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "1k.h5")
        sh([binary, "run", "-c", "configs/stsb-raw.yaml", "--set", "dataset.path=" + a.dataset, "--set", "dataset.max_rows=1000",
            "--set", "detectors=" + DETECTORS, "--set", "output.attention_every=10", "-o", base, "--no-progress"])
        files = [("1k", base)]
        for name, times in (("10k", 10), ("100k", 100)):
            files.append((name, os.path.join(tmp, name + ".h5")))
            tile(base, files[-1][1], times)
        print(f"{'pairs':>6} {'file MiB':>9} {'report s':>9} {'heads s':>8} {'report/heads':>12} {'HTML KiB':>9}")
        for name, path in files:
            html = path[:-3] + ".html"
            report = best_time([binary, "report", path, "-o", html, "--bins", "4"], a.repeat)
            heads = best_time([binary, "heads", path, "--top", "3"], a.repeat)
            print(f"{name:>6} {os.path.getsize(path) / 2**20:9.1f} {report:9.2f} {heads:8.2f} {report / heads:12.2f} "
                  f"{os.path.getsize(html) / 1024:9.0f}")


if __name__ == "__main__":
    main()
