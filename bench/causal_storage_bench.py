#!/usr/bin/env python3
"""Causal maps on disk: full n x n maps (what attnscan stores) against their lower triangle (n(n+1)/2).

  bench/causal_storage_bench.py [--attnscan build/pipeline/attnscan] [--model DIR] [--short 200] [--long 50]
                                [--repeat 3] [--work DIR]

Runs a decoder (SmolLM2-135M-Instruct by default) over two single-text sets built from the shared STS-B
train file: SHORT distinct sentences of column 5 spread evenly over the file, and LONG texts of 200-500
tokens, each the next distinct sentences (the others) joined until a drawn word count (fixed seed). For each set, output.dtype (float16,
uint8) and output.compression (none, lz4, deflate) it measures

  - attnscan's file: the size of attention/values on disk, and the run's wall and CPU seconds less those of
    the same run with output.attention_every=0 (the same forward and detectors, no attention stored): the
    cost of converting, compressing, checksumming and writing the attention;
  - the lower triangle: without compression, maps x n(n+1)/2 values per example; with it, every example's stored values (the file's own bytes, uint8 codes included) packed
    as each map's n(n+1)/2 values [layer][head][query][key <= query] and written by h5py with attnscan's
    settings (1-D chunks of 256 Ki values, lz4 filter 32004, or shuffle + deflate 4, Fletcher32); the same
    full maps written by the same h5py code, so the two write times compare like for like;
  - reading one example (the set's median-length one and its longest) in Python: attnscan's reader
    (`Example.attention`), and from the h5py files the full slice against the triangle's slice unpacked
    into a zero [L, H, n, n] array (median of --reads reads, page cache warm).

Prints one Markdown table (docs/performance.md, "Causal maps on disk").
"""
import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import time

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
STSB_TRAIN = os.path.join(ROOT, "..", "shared", "datasets", "stsb", "sts-train.csv")
LZ4 = 32004
CHUNK = 256 * 1024


def sentences():
    seen, out = set(), []
    with open(STSB_TRAIN, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            s = " ".join(fields[5].split()) if len(fields) > 5 else ""
            if s and s not in seen:
                seen.add(s)
                out.append(s)
    return out


def write_sets(work, n_short, n_long):
    pool = sentences()
    short, step = os.path.join(work, "short.tsv"), len(pool) // (2 * n_short)
    with open(short, "w", encoding="utf-8") as f:  # spread over the file's genres (captions, news, forums)
        for i in range(n_short):
            f.write(f"s{i}\t{pool[2 * i * step]}\n")
    rng = random.Random(7)
    long_, at = os.path.join(work, "long.tsv"), 1
    with open(long_, "w", encoding="utf-8") as f:
        for i in range(n_long):
            target, words, parts = rng.randint(150, 370), 0, []
            while words < target:
                parts.append(pool[at])
                words += len(pool[at].split())
                at += 2  # the odd sentences: none of them is a short text
            f.write(f"l{i}\t{' '.join(parts)}\n")
    return {"short": short, "long": long_}


def timed_run(binary, model, data, target, extra):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    p = subprocess.run([binary, "run", "--model", model, "--set", "dataset.path=" + data, "--set", "dataset.format=tsv",
                        "--set", "dataset.header=false", "--set", "dataset.quoting=none", "--set", "dataset.id=0",
                        "--set", "dataset.sentence_a=1", "--set", "dataset.sentence_b=", "--set", "detectors=prev_token",
                        "--set", "engine.max_length=1024", *extra, "-o", target, "--overwrite", "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"attnscan run failed:\n{p.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def storage(path, name="attention/values"):
    with h5py.File(path, "r") as f:
        return f[name].id.get_storage_size()


def filters(compression):
    if compression == "lz4":
        return {"compression": LZ4}
    if compression == "deflate":
        return {"compression": "gzip", "compression_opts": 4, "shuffle": True}
    return {}


def examples(f):
    n = f["examples/n_tokens"][...].astype(np.int64)
    o = f["examples/attention_offset"][...].astype(np.int64)
    maps = len(f["attention"].attrs["layers"]) * len(f["attention"].attrs["heads"])
    return n, o, maps


def simulate(source, work, compression):
    """The file's values written by h5py as full maps and as lower triangles; (bytes, write s) of each."""
    result = {}
    with h5py.File(source, "r") as f:
        n, o, maps = examples(f)
        values = f["attention/values"]
        full = [values[o[i]:o[i] + maps * n[i] * n[i]] for i in range(len(n))]
    tri = []
    for i, a in enumerate(full):
        rows, cols = np.tril_indices(int(n[i]))
        tri.append(a.reshape(maps, n[i], n[i])[:, rows, cols].reshape(-1))
    for kind, parts in (("full", full), ("triangle", tri)):
        path = os.path.join(work, f"sim_{kind}_{compression}.h5")
        started = time.perf_counter()
        with h5py.File(path, "w") as g:
            d = g.create_dataset("values", shape=(0,), maxshape=(None,), dtype=parts[0].dtype, chunks=(CHUNK,),
                                 fletcher32=True, **filters(compression))
            at = 0
            for a in parts:
                d.resize((at + len(a),))
                d[at:at + len(a)] = a
                at += len(a)
        result[kind] = (storage(path, "values"), time.perf_counter() - started, path)
    if compression == "none":  # attnscan's uncompressed attention is contiguous: no chunk rounding
        itemsize = full[0].dtype.itemsize
        for kind, per_map in (("full", n * n), ("triangle", n * (n + 1) // 2)):
            result[kind] = (int(maps * per_map.sum()) * itemsize, *result[kind][1:])
    return result, n, maps


def median_seconds(fn, reads):
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def read_times(attnscan_file, sim, n, maps, reads):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import attnscan
    order = np.argsort(n, kind="stable")
    picks = {"median": int(order[len(order) // 2]), "longest": int(order[-1])}
    full_offsets = np.concatenate([[0], np.cumsum(maps * n * n)])
    tri_offsets = np.concatenate([[0], np.cumsum(maps * n * (n + 1) // 2)])
    out = {}
    with attnscan.open(attnscan_file) as r, h5py.File(sim["full"][2], "r") as gf, h5py.File(sim["triangle"][2], "r") as gt:
        for which, i in picks.items():
            k = int(n[i])
            rows, cols = np.tril_indices(k)

            def triangle():
                packed = gt["values"][tri_offsets[i]:tri_offsets[i + 1]].reshape(maps, -1)
                a = np.zeros((maps, k, k), dtype=packed.dtype)
                a[:, rows, cols] = packed
                return a

            def full():
                return gf["values"][full_offsets[i]:full_offsets[i + 1]].reshape(maps, k, k)

            assert np.array_equal(triangle(), full()), "the triangle does not give the full maps back"
            out[which] = (k, median_seconds(lambda: r.example(i).attention, reads), median_seconds(full, reads),
                          median_seconds(triangle, reads))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnscan", default=os.path.join(ROOT, "build", "pipeline", "attnscan"))
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/attnscan/models/SmolLM2-135M-Instruct"))
    ap.add_argument("--short", type=int, default=200)
    ap.add_argument("--long", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="runs per setting; the median is reported")
    ap.add_argument("--reads", type=int, default=20)
    ap.add_argument("--work", default="/tmp/attnscan_causal_bench")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    sets = write_sets(a.work, a.short, a.long)
    rows = []
    for set_name, data in sets.items():
        base = os.path.join(a.work, f"{set_name}_scores_only.h5")
        runs = [timed_run(a.attnscan, a.model, data, base, ["--set", "output.attention_every=0"]) for _ in range(a.repeat)]
        base_wall, base_cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        with h5py.File(base, "r") as f:
            n = f["examples/n_tokens"][...].astype(np.int64)
        print(f"{set_name}: {len(n)} texts, n {n.min()}-{n.max()} (median {int(np.median(n))}), scores only: "
              f"wall {base_wall:.2f} s, CPU {base_cpu:.2f} s", flush=True)
        for dtype in ("float16", "uint8"):
            for compression in ("none", "lz4", "deflate"):
                target = os.path.join(a.work, f"{set_name}_{dtype}_{compression}.h5")
                runs = [timed_run(a.attnscan, a.model, data, target, ["--set", "output.dtype=" + dtype, "--set",
                                                                      "output.compression=" + compression])
                        for _ in range(a.repeat)]
                wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
                stored = storage(target)
                sim, n, maps = simulate(target, a.work, compression)
                reads = read_times(target, sim, n, maps, a.reads)
                rows.append((set_name, dtype, compression, stored, wall - base_wall, cpu - base_cpu, sim, reads))
                print(f"  {dtype} {compression}: attention {stored / 2**20:.1f} MiB, +{wall - base_wall:.2f} s wall, "
                      f"+{cpu - base_cpu:.2f} s CPU; h5py full {sim['full'][0] / 2**20:.1f} MiB in {sim['full'][1]:.2f} s, "
                      f"triangle {sim['triangle'][0] / 2**20:.1f} MiB in {sim['triangle'][1]:.2f} s; reads "
                      + ", ".join(f"{w} (n {k}): {x * 1e3:.2f} / {y * 1e3:.2f} / {z * 1e3:.2f} ms"
                                  for w, (k, x, y, z) in reads.items()), flush=True)
                for kind in ("full", "triangle"):
                    os.remove(sim[kind][2])
                if compression != "none" or dtype != "float16":
                    os.remove(target)
    print("\n| texts | dtype | compression | attnscan full MiB | storing s (wall / CPU) | h5py full MiB | h5py triangle MiB "
          "| triangle / full | h5py write s full / triangle | read median text ms: reader / full / triangle "
          "| read longest ms: reader / full / triangle |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for set_name, dtype, compression, stored, wall, cpu, sim, reads in rows:
        m, l = reads["median"], reads["longest"]
        print(f"| {set_name} | {dtype} | {compression} | {stored / 2**20:,.1f} | {wall:.2f} / {cpu:.2f} | "
              f"{sim['full'][0] / 2**20:,.1f} | {sim['triangle'][0] / 2**20:,.1f} | {sim['triangle'][0] / sim['full'][0]:.3f} | "
              f"{sim['full'][1]:.2f} / {sim['triangle'][1]:.2f} | {m[1] * 1e3:.2f} / {m[2] * 1e3:.2f} / {m[3] * 1e3:.2f} | "
              f"{l[1] * 1e3:.2f} / {l[2] * 1e3:.2f} / {l[3] * 1e3:.2f} |")


if __name__ == "__main__":
    main()
