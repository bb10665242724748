#!/usr/bin/env python3
"""attnscan against the pipeline a researcher would write instead, on the same pairs.

  /usr/bin/python3 bench/compare_bench.py [--model DIR] [--dataset FILE] [--header|--no-header]
      [--col-a 1] [--col-b 2] [--rows 1500] [-n 3] [--out-dir DIR] [--build build]
      [--ref-binary OTHER_ATTNSCAN] [--no-baseline] [--peer current|reference|both] [--bf16]

Each repetition runs, one after the other (alternating, so that drift of a shared machine hits all):
  attnscan       `attnscan run`, all seven detectors, fp16 attention of every pair stored uncompressed
  baseline       bench/hf_baseline.py in the current peer's venv (scripts/make_peer_venv.sh: the current
                 PyPI torch + transformers): HF AutoModel in fp32, eager attention, output_attentions,
                 batches of 32, attention cropped to each pair and written with h5py as fp16, four seed
                 metrics
  baseline-4.40  with --peer reference or both: the same script in the reference venv (transformers
                 4.40.2 on Debian's torch 1.13, scripts/setup.sh test)
  scores-only    `attnscan run` as above with `--set output.attention_every=0`
  ref, ref-scores  the same two runs with --ref-binary (e.g. main's attnscan), when given
  bf16           with --bf16: the attnscan run with `--set engine.precision=bf16` (CPUs with native bf16;
                 its FLOP rate is still read against the fp32 peak)

and prints the median over -n repetitions of wall time, CPU time (user + sys of the child and of the
children it waited for, from os.wait4) and peak RSS (ru_maxrss: the largest single process of the
child's tree), the ratios to attnscan, and the model-FLOP rate of the attnscan runs against the fp32
GEMM peak measured in this invocation (bench/forward_bench --gemm-peak, before and after; the larger).

FLOPs are counted from the model's config.json and the stored examples/n_tokens (real tokens, no
padding), as Transformer::flops counts them: per layer 2*T*(4H^2 + 2HI) + 4*sum(n^2)*H (QKV,
attention output, FFN; QK^T and PV), T = sum(n). "model" counts every layer complete; "executed"
counts what attnscan runs without hidden states: the last layer stops at its attention
probabilities (QKV and QK^T only), as the encoder does.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CACHE = os.environ.get("ATTNSCAN_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnscan")
PEER_VENVS = {"current": os.path.join(CACHE, "peer-venv"),      # scripts/make_peer_venv.sh makes it
              "reference": os.path.join(CACHE, "tools-venv")}   # scripts/setup.sh test makes it
BASELINE_RUN = {"current": "baseline", "reference": "baseline-4.40"}
DETECTORS = ["next_token", "prev_token", "same_sentence_match", "cross_sentence_match", "subword_siblings",
             "delimiter", "entropy"]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def timed(args, log_path):
    """Runs args; returns (wall s, cpu s, peak RSS KiB) of the child and everything it waited for."""
    with open(log_path, "w") as log:
        t0 = time.perf_counter()
        p = subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        with open(log_path) as log:
            sys.exit(f"failed ({p.returncode}): {' '.join(args)}\n{log.read()[-3000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def require_built(build, *programs):
    """Stops with one line naming every program of `build` (relative paths) that is not there, and how to build it."""
    missing = [p for p in programs if not os.access(os.path.join(build, p), os.X_OK)]
    if missing:
        targets = " ".join(os.path.basename(p) for p in missing)
        sys.exit(f"{sys.argv[0]}: {', '.join(os.path.join(build, p) for p in missing)} not found: "
                 f"build them first (cmake --build {build} --target {targets})")


def gemm_peak(build):
    out = subprocess.run([os.path.join(build, "bench", "forward_bench"), "--gemm-peak"], capture_output=True,
                         text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("fp32 GEMM peak"))
    return float(re.search(r"peak ([\d.]+) GFLOP/s$", line).group(1)), line


GATED_FFN = ("llama", "mistral", "qwen2", "qwen3", "gemma3_text")  # down(act(gate(x)) * up(x)): three products


def model_flops(model_dir, n_tokens):
    with open(os.path.join(model_dir, "config.json")) as f:
        c = json.load(f)
    # DistilBERT names them dim, hidden_dim, n_layers; GPT-2 n_embd, n_inner, n_layer, n_head
    key = lambda *names: next(c[k] for k in names if c.get(k) is not None)
    H, L = key("hidden_size", "dim", "n_embd"), key("num_hidden_layers", "n_layers", "n_layer")
    I = key("intermediate_size", "hidden_dim", "n_inner") if any(c.get(k) for k in ("intermediate_size", "hidden_dim", "n_inner")) else 4 * H
    heads = key("num_attention_heads", "n_heads", "n_head")
    D = c.get("head_dim") or H // heads
    kv = c.get("num_key_value_heads") or heads  # grouped-query attention
    q, ffn = heads * D, (3 if c.get("model_type") in GATED_FFN else 2) * H * I
    n = np.asarray(n_tokens, dtype=np.float64)
    T, sq = n.sum(), (n * n).sum()
    qkv = 2 * T * H * (q + 2 * kv * D)
    layer = qkv + 2 * T * (q * H + ffn) + 4 * sq * q  # QKV, attention output, FFN; QK^T and PV
    last_attention_only = qkv + 2 * sq * q  # QKV and QK^T
    return L * layer, (L - 1) * layer + last_attention_only


def write_run_config(path, model, dataset, header, col_a, col_b, rows):
    """The benchmarked run: the pairs of a TSV file, all seven detectors, fp16 attention of every pair
    stored uncompressed. max_rows counts the header-less data rows, as the baseline counts pairs."""
    second = col_b if col_b >= 0 else '""'  # single texts: no sentence B
    with open(path, "w") as f:
        f.write(f"model: {json.dumps(model)}\n"
                f"dataset:\n  format: tsv\n  path: {json.dumps(dataset)}\n  header: {str(header).lower()}\n"
                f"  quoting: none\n  sentence_a: {col_a}\n  sentence_b: {second}\n  max_rows: {rows}\n"
                f"  on_bad_row: skip\n"
                f"output:\n  dtype: float16\n  compression: none\n  attention_every: 1\n"
                f"detectors:\n" + "".join(f"  - {d}\n" for d in DETECTORS))
    return path


def n_tokens_of(path):
    with h5py.File(path, "r") as f:
        return f["examples/n_tokens"][...].astype(np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("ATTNSCAN_MODEL") or os.path.join(CACHE, "models", "all-MiniLM-L6-v2"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "paws", "dev.tsv"))
    ap.add_argument("--header", dest="header", action="store_true", default=True)
    ap.add_argument("--no-header", dest="header", action="store_false")
    ap.add_argument("--col-a", type=int, default=1, help="0-based column of sentence A (PAWS: 1, STS-B: 5)")
    ap.add_argument("--col-b", type=int, default=2,
                    help="0-based column of sentence B (PAWS: 2, STS-B: 6); -1: single texts (a decoder's main input)")
    ap.add_argument("--rows", type=int, default=1500)
    ap.add_argument("-n", type=int, default=3, help="repetitions of each run")
    ap.add_argument("--out-dir", default=None, help="where outputs and logs go (default: a temporary directory)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ref-binary", default=None, help="another attnscan to run alternately (e.g. main's)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the HF baseline")
    ap.add_argument("--peer", choices=("current", "reference", "both"), default="current",
                    help="the HF baseline's venv: current (peer-venv, the default), reference (tools-venv, "
                         "transformers 4.40.2 on torch 1.13) or both, side by side")
    ap.add_argument("--bf16", action="store_true", help="also run attnscan with engine.precision=bf16")
    a = ap.parse_args()
    require_built(a.build, "pipeline/attnscan", "bench/forward_bench")
    peers = [] if a.no_baseline else (["current", "reference"] if a.peer == "both" else [a.peer])
    versions = {}
    for peer in peers:
        python = os.path.join(PEER_VENVS[peer], "bin", "python")
        got = subprocess.run([python, "-c", "import torch, transformers; print(torch.__version__, transformers.__version__)"],
                             capture_output=True, text=True) if os.access(python, os.X_OK) else None
        if got is None or got.returncode != 0:
            make = "scripts/make_peer_venv.sh" if peer == "current" else "scripts/setup.sh test"
            sys.exit(f"{sys.argv[0]}: the {peer} peer's venv {PEER_VENVS[peer]} has no torch + transformers: "
                     f"make it with {make} (or pass --no-baseline)")
        versions[peer] = "torch {}, transformers {}".format(*got.stdout.split())
    binary = os.path.join(a.build, "pipeline", "attnscan")
    model, dataset = os.path.abspath(a.model), os.path.abspath(a.dataset)
    out_dir = a.out_dir or tempfile.mkdtemp(prefix="compare_bench_")
    os.makedirs(out_dir, exist_ok=True)

    print(subprocess.run([binary, "info"], capture_output=True, text=True, check=True).stdout.strip())
    print(f"cores: {len(os.sched_getaffinity(0))}; load average before: {loadavg()}")
    for peer in peers:
        print(f"{BASELINE_RUN[peer]}: HF eager attention in {PEER_VENVS[peer]} ({versions[peer]})")
    peak0, line0 = gemm_peak(a.build)
    print(line0)

    config = write_run_config(os.path.join(out_dir, "compare.yaml"), model, dataset, a.header, a.col_a, a.col_b, a.rows)

    def attnscan_run(bin_path, out, scores_only, *sets):
        args = [bin_path, "run", "-c", config, "-o", out, "--overwrite", "--no-progress"]
        if scores_only:
            args += ["--set", "output.attention_every=0"]
        for s in sets:
            args += ["--set", s]
        return args

    h5 = lambda name: os.path.join(out_dir, name + ".h5")
    runs = {"attnscan": lambda: attnscan_run(binary, h5("attnscan"), False)}
    for peer in peers:
        name = BASELINE_RUN[peer]
        runs[name] = lambda peer=peer, name=name: (
            [os.path.join(PEER_VENVS[peer], "bin", "python"), os.path.join(ROOT, "bench", "hf_baseline.py"),
             "--peer", peer, "--model", model, "--dataset", dataset, "--col-a", str(a.col_a), "--col-b", str(a.col_b),
             "--rows", str(a.rows), "--out", h5(name)] + (["--header"] if a.header else []))
    runs["scores-only"] = lambda: attnscan_run(binary, h5("scores-only"), True)
    if a.ref_binary:
        runs["ref"] = lambda: attnscan_run(os.path.abspath(a.ref_binary), h5("ref"), False)
        runs["ref-scores"] = lambda: attnscan_run(os.path.abspath(a.ref_binary), h5("ref-scores"), True)

    if a.bf16:
        runs["bf16"] = lambda: attnscan_run(binary, h5("bf16"), False, "engine.precision=bf16")

    results = {k: [] for k in runs}
    tokens = {}
    for rep in range(a.n):
        for name, make in runs.items():
            load = loadavg()
            wall, cpu, rss = timed(make(), os.path.join(out_dir, f"{name}.{rep}.log"))
            results[name].append((wall, cpu, rss))
            print(f"rep {rep + 1}/{a.n} {name:<12} wall {wall:7.2f} s  cpu {cpu:7.2f} s  peak RSS {rss / 1024:6.0f} MiB"
                  f"  (load average before: {load})", flush=True)
            if rep == 0:
                tokens[name] = n_tokens_of(h5(name))
            if name in ("attnscan", "ref", "bf16") or name.startswith("baseline"):  # the big files: keep the disk free
                os.remove(h5(name))
    peak1, line1 = gemm_peak(a.build)
    print(line1 + f"  (after; load average {loadavg()})")
    peak = max(peak0, peak1)

    n = tokens["attnscan"]
    print(f"\npairs: {len(n)}, real tokens: {int(n.sum())} (mean {n.mean():.1f}, max {n.max()}), "
          f"model {os.path.basename(model.rstrip('/'))}, dataset {dataset}")
    for name, t in tokens.items():
        if len(t) != len(n) or int(t.sum()) != int(n.sum()):
            print(f"WARNING: {name} saw {len(t)} pairs / {int(t.sum())} tokens, attnscan {len(n)} / {int(n.sum())}")
    full, executed = model_flops(model, n)
    print(f"FLOPs of the real tokens: model (every layer complete) {full / 1e9:.1f} GFLOP, executed without hidden "
          f"states {executed / 1e9:.1f} GFLOP; fp32 GEMM peak {peak:.1f} GFLOP/s (best of before/after)")
    med = {k: tuple(statistics.median(r[i] for r in v) for i in range(3)) for k, v in results.items()}
    base = med["attnscan"]
    print(f"\nmedians over {a.n} run(s):")
    print(f"{'run':<13} {'wall s':>8} {'cpu s':>8} {'RSS MiB':>8} {'pairs/s':>8} {'wall/attnscan':>14} "
          f"{'cpu/attnscan':>13} {'model %peak':>12} {'exec %peak':>11}")
    for k, (wall, cpu, rss) in med.items():
        flop_cols = ""
        if not k.startswith("baseline"):
            flop_cols = f"{100 * full / wall / 1e9 / peak:11.1f}% {100 * executed / wall / 1e9 / peak:10.1f}%"
            if k.startswith("ref"):  # the reference binary may run every layer complete
                flop_cols = f"{100 * full / wall / 1e9 / peak:11.1f}% {'':>11}"
        print(f"{k:<13} {wall:8.2f} {cpu:8.2f} {rss / 1024:8.0f} {len(n) / wall:8.1f} {wall / base[0]:14.2f} "
              f"{cpu / base[1]:13.2f} {flop_cols}")
    print()
    for peer in peers:
        b = med[BASELINE_RUN[peer]]
        print(f"attnscan vs {BASELINE_RUN[peer]} ({peer} peer: {versions[peer]}): {b[0] / base[0]:.2f}x faster (wall), "
              f"{b[1] / base[1]:.2f}x less CPU, peak RSS {base[2] / 1024:.0f} vs {b[2] / 1024:.0f} MiB")
        if "bf16" in med:
            print(f"attnscan bf16 vs {BASELINE_RUN[peer]}: {b[0] / med['bf16'][0]:.2f}x faster (wall)")
    if not a.out_dir:
        shutil.rmtree(out_dir)


if __name__ == "__main__":
    main()
