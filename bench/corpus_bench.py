#!/usr/bin/env python3
"""Corpus scale after the run: every step a researcher takes on a large run, timed, with peak RSS.

  /usr/bin/python3 bench/corpus_bench.py [--pairs 100000] [--shards 8] [--attention-every 100]
      [--build build] [--keep DIR] [--skip-run DIR_WITH_SHARDS] [--set KEY=VALUE ...]

The dataset is built by recombining the sentences of ../shared/datasets (PAWS dev and test, STS-B train,
SNLI dev; deduplicated): pair i is two sentences drawn with a fixed seed, its label 0 or 1 (a number), so
that `compare --by label` has two groups of half the pairs each. It is written as a TSV under the work
folder (never into the repository).

Steps, each a separate process (wall seconds and its own peak RSS from wait4):
  run       `attnscan run` (configs/paws.yaml: default model, all seven detectors, fp16 lz4) as --shards
            shards one after another, attention of every --attention-every-th pair, scores for all;
  merge     `attnscan merge` of the shards, and `merge --virtual` (the attention left in the shards);
  verify, heads, compare --by label, report, similarity: on the merged file;
  python    `attnscan.open(path).scores_frame()` of every output (the Python package, Debian's h5py).
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DATASETS = os.path.join(ROOT, "..", "shared", "datasets")


def sentences():
    """Every distinct sentence of the shared datasets, in a fixed order."""
    seen, out = set(), []

    def add(s):
        s = s.strip()
        if s and "\t" not in s and s not in seen:
            seen.add(s)
            out.append(s)

    for split in ("dev.tsv", "test.tsv"):
        with open(os.path.join(DATASETS, "paws", split), encoding="utf-8") as f:
            next(f)
            for line in f:
                cols = line.rstrip("\r\n").split("\t")
                if len(cols) >= 3:
                    add(cols[1])
                    add(cols[2])
    with open(os.path.join(DATASETS, "stsb", "sts-train.csv"), encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) >= 7:
                add(cols[5])
                add(cols[6])
    for name in ("s1.dev", "s2.dev"):
        with open(os.path.join(DATASETS, "snli", name), encoding="utf-8") as f:
            for line in f:
                add(line)
    return out


def write_dataset(path, pairs):
    pool = sentences()
    rng = random.Random(31)
    with open(path, "w", encoding="utf-8") as f:
        f.write("id\tsentence1\tsentence2\tlabel\n")
        for i in range(pairs):
            f.write(f"{i + 1}\t{rng.choice(pool)}\t{rng.choice(pool)}\t{i % 2}\n")
    return len(pool)


def timed(cmd, env=None, stdout=subprocess.DEVNULL):
    """(wall seconds, peak RSS MiB) of one process; exits naming the command if it fails."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=100000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--attention-every", type=int, default=100)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keep", default=None, help="work folder to keep (default: a temporary one)")
    ap.add_argument("--skip-run", default=None, help="a --keep folder of an earlier invocation: reuse its shards")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="extra --set for each shard's run (e.g. engine.precision=bf16 where the CPU has AMX)")
    a = ap.parse_args()
    if not os.path.isdir(DATASETS):
        sys.exit(f"needs the shared datasets at {DATASETS}")
    binary = os.path.join(a.build, "pipeline", "attnscan")
    work = a.skip_run or a.keep or tempfile.mkdtemp(prefix="corpus-bench-")
    os.makedirs(work, exist_ok=True)
    shards = [os.path.join(work, f"shard{i}.h5") for i in range(a.shards)]
    merged = os.path.join(work, "merged.h5")
    rows = []

    if not a.skip_run:
        data = os.path.join(work, "pairs.tsv")
        pool = write_dataset(data, a.pairs)
        print(f"{a.pairs} pairs from {pool} distinct sentences of the shared datasets; {a.shards} shards; "
              f"attention of every {a.attention_every}th pair", flush=True)
        walls, peak = 0.0, 0.0
        for i, shard in enumerate(shards):
            wall, rss = timed([binary, "run", "-c", os.path.join(ROOT, "configs", "paws.yaml"),
                               "--set", "dataset.path=" + data,
                               "--set", f"output.attention_every={a.attention_every}",
                               *[x for kv in a.set for x in ("--set", kv)],
                               "--shard", f"{i}/{a.shards}", "-o", shard, "--no-progress"])
            walls += wall
            peak = max(peak, rss)
        rows.append((f"run ({a.shards} shards, one after another)", walls, peak))
    if os.path.exists(merged):
        os.remove(merged)
    rows.append(("merge", *timed([binary, "merge", merged, *shards])))
    size = os.path.getsize(merged) / 2**20
    virtual = os.path.join(work, "virtual.h5")
    rows.append(("merge --virtual", *timed([binary, "merge", "--virtual", "--overwrite", virtual, *shards])))
    virtual_size = os.path.getsize(virtual) / 2**20
    rows.append(("verify of the virtual merge (shards behind it)", *timed([binary, "verify", virtual])))
    rows.append(("verify", *timed([binary, "verify", merged])))
    rows.append(("heads", *timed([binary, "heads", merged, "--top", "3"])))
    rows.append(("compare --by label", *timed([binary, "compare", merged, "--by", "label", "--top", "3"])))
    report = os.path.join(work, "report.html")
    rows.append(("report", *timed([binary, "report", merged, "-o", report])))
    rows.append(("similarity", *timed([binary, "similarity", merged])))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    frame = "import sys, attnscan; df = attnscan.open(sys.argv[1]).scores_frame(); print(len(df))"
    rows.append(("python scores_frame() of every output", *timed(["/usr/bin/python3", "-c", frame, merged], env=env)))

    print(f"merged file {size:.0f} MiB; virtual merge {virtual_size:.0f} MiB beside the shards")
    print(f"{'step':<42} {'wall s':>8} {'peak RSS MiB':>13}")
    for name, wall, rss in rows:
        print(f"{name:<42} {wall:8.2f} {rss:13.0f}")
    if not a.keep and not a.skip_run:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
