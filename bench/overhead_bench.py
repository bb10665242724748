#!/usr/bin/env python3
"""Where attnscan's CPU goes outside the matrix kernels, per real token.

  /usr/bin/python3 bench/overhead_bench.py [--model DIR] [--dataset FILE] [--rows 1500] [--build build]
      [--out-dir DIR] [--set KEY=VALUE ...] [--ref-binary OTHER_ATTNSCAN] [--ref-set KEY=VALUE ...] [-n 1]

Runs `attnscan run` as bench/compare_bench.py does (PAWS dev, all seven detectors, fp16 attention of
every pair stored uncompressed) under `perf record` (all threads and the detector workers), then
prints two figures per run (--ref-set alone compares two settings of one binary):

  outside GEMM (FLOPs)   (CPU s - executed GEMM FLOPs / per-core fp32 peak) / real tokens: the CPU a
                         run spends beyond what its GEMMs would take at the machine's peak (the peak
                         from bench/forward_bench --gemm-peak in this invocation, divided by the cores)
  outside GEMM (perf)    CPU s x (1 - share of samples in GEMM kernels) / real tokens: the same from
                         the profile (BLAS and oneDNN JIT kernels counted as GEMM)

and the split of the samples into buckets (GEMM kernels, packing, LibTorch elementwise, detectors,
fp16 conversion and checksums, HDF5, kernel, libc, start-up, attnscan itself), each as a share and as
us of CPU per real token. Each repetition also times a run of --fixed-rows pairs (not profiled), which
splits the first figure in two:

  fixed per run          CPU s of that short run beyond its GEMMs at the peak: loading LibTorch's 290
                         libraries, hashing and packing the model, starting the detector workers,
                         opening and finishing the output; paid once per process (per SLURM task)
  marginal outside GEMM  the rest of the long run's outside-GEMM CPU per real token beyond the short
                         run's: what each further pair costs, the figure a corpus of millions of pairs sees,
                         by either ruler (FLOPs: beyond the peak; perf: outside the GEMM kernels' samples)

and the part of the fixed cost no change to attnscan can remove while its forward pass runs on
LibTorch: the median of 5 runs of bench/libtorch_load_floor, an empty program linked against LibTorch
(the same libraries loaded, bar attnscan's own four).

With -n 2 or more, the perf ruler's marginal figure is also printed for each repetition (its own profile
less its own short run), so that one invocation shows the noise between runs of the same binary.

With --symbols N, one more run of --fixed-rows pairs per binary is profiled, and the N symbols outside
the GEMM kernels whose CPU grows most from it to the long run are printed, with the sum over all symbols:
the marginal figure measured symbol by symbol, free of the FLOPs ruler that `fixed per run` uses.

An unmeasured warm-up run comes first and every output is deleted once read
(--no-warm-up: see its help). With --ref-binary the same run of another attnscan is measured alternately
(before/after in one invocation). Needs `perf` (Debian linux-perf) and perf_event_paranoid <= 2.
"""
import argparse
import functools
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_bench import (CACHE, DETECTORS, ROOT, gemm_peak, loadavg, model_flops, n_tokens_of, require_built,  # noqa: E402
                           timed, write_run_config)

# (bucket, test on (dso, symbol)); the first that matches takes the sample.
BUCKETS = [
    ("GEMM kernels", lambda d, s: re.search(r"gemm.*kernel|kernel.*gemm|brgemm|gemv|kernels::.*::product(_[a-z0-9]+)?\b", s) is not None
        or re.match(r"\[JIT\]|perf-\d+\.map|\[unknown\]|//anon", d) is not None),
    ("packing (BLAS copies, oneDNN reorders)", lambda d, s: re.match(r"libopenblas|libblas|libdnnl|libmkldnn|libtorch", d)
        is not None and re.search(r"copy|reorder|pack", s) is not None),
    ("LibTorch elementwise", lambda d, s: re.match(r"libtorch|libc10|libgomp|libtbb", d) is not None),
    ("detectors", lambda d, s: d.endswith(".so") and os.path.splitext(d)[0] in DETECTORS or d.startswith("libm.")),
    ("fp16 conversion, checksums", lambda d, s: re.search(r"to_half|crc32|checksum|fletcher", s, re.I) is not None),
    ("HDF5 and filters", lambda d, s: re.match(r"libhdf5|liblz4|libz\.|libh5", d) is not None),
    ("kernel (page cache, faults)", lambda d, s: d.startswith("[kernel")),
    ("libc, libstdc++ (memmove, malloc)", lambda d, s: re.match(r"libc\.|libstdc\+\+|libc-", d) is not None),
    ("start-up (dynamic linking)", lambda d, s: d.startswith("ld-linux")),
    ("attnscan itself (tokenizer, pipeline)", lambda d, s: d == "attnscan" or d.startswith("libattnscan")),
    ("BLAS and oneDNN, other", lambda d, s: re.match(r"libopenblas|libblas|libdnnl|libmkldnn", d) is not None),
]
OTHER = "other"


@functools.lru_cache(maxsize=None)  # a profile's split is read for its figures and again for the spread
def profile_split(perf_data, binary):
    """{bucket: share of samples} from perf report (dso, symbol), the shares summing to 1."""
    shares = {name: 0.0 for name, _ in BUCKETS}
    shares[OTHER] = 0.0
    for (bucket, _, _), share in symbol_cpu(perf_data, binary, 1.0).items():
        shares[bucket] += share
    return shares


def symbol_cpu(perf_data, binary, cpu):
    """{(bucket, dso, symbol): CPU s} of one profiled run: each (dso, symbol)'s share of the samples times the
    run's CPU (the shares sum to 1: perf rounds each line to 0.01%, and thousands of small lines sum above
    100). The profiled binary's own samples count as attnscan's whatever its file is called (a --ref-binary
    may be renamed). JIT code and unresolved addresses are one symbol per dso ("?")."""
    out = subprocess.run(["perf", "report", "-i", perf_data, "--no-children", "--sort", "dso,sym", "--stdio",
                          "--percent-limit", "0", "-F", "overhead,dso,sym"], capture_output=True, text=True, check=True)
    rows, total = {}, 0.0
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.*?)\s+\[[.k]\]\s+(.*)$", line)  # a dso may hold spaces: "[JIT] tid 7"
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3).strip()
        if dso == os.path.basename(binary):
            dso = "attnscan"
        bucket = next((b for b, test in BUCKETS if test(dso, sym)), OTHER)
        if dso.startswith("[JIT]"):  # "[JIT] tid 7": one dso for all threads' JIT code
            dso, sym = "[JIT]", "?"
        elif sym.startswith("0x"):
            sym = "?"
        key = (bucket, dso, sym)
        rows[key] = rows.get(key, 0.0) + pct
        total += pct
    return {k: pct / total * cpu for k, pct in rows.items()}


def fixed_cpu(short_cpu, short_n, model, per_core):
    """The short run's CPU beyond its GEMMs at the peak: what a process pays once."""
    return short_cpu - model_flops(model, short_n)[1] / per_core


def per_further_token(outside, fixed, n, short_n):
    """us of CPU outside the GEMMs per real token of the long run beyond the short run's."""
    return (outside - fixed) * 1e6 / (int(n.sum()) - int(short_n.sum()))


def marginal_by_repetition(reps, short_runs, binary, model, per_core):
    """The perf ruler's marginal figure of each repetition from its own profile and its own short run: the
    spread between repetitions is the noise any difference between two binaries has to beat."""
    figures = []
    for (cpu, _, _, n, data), (short_cpu, _, _, short_n, _) in zip(reps, short_runs):
        gemm = profile_split(data, binary)[BUCKETS[0][0]]
        figures.append(per_further_token(cpu * (1 - gemm), fixed_cpu(short_cpu, short_n, model, per_core), n, short_n))
    return figures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("ATTNSCAN_MODEL") or os.path.join(CACHE, "models", "all-MiniLM-L6-v2"))
    ap.add_argument("--dataset", default=os.path.join(ROOT, "..", "shared", "datasets", "paws", "dev.tsv"))
    ap.add_argument("--rows", type=int, default=1500)
    ap.add_argument("-n", type=int, default=1, help="repetitions (the median CPU and its profile are printed)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out-dir", default=None)
    ap.add_argument("--set", action="append", default=[], help="extra --set for every attnscan run")
    ap.add_argument("--ref-binary", default=None, help="another attnscan to measure alternately")
    ap.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                    help="skip the unmeasured first run. In a fresh VM the first writes into memory the guest never "
                         "touched cost ~15x more kernel time (host page faults: 1.5 GB through dd took 4.5 s of system "
                         "time, then 0.33 s once freed pages were reused); the warm-up and deleting each output keep "
                         "that out of the figures")
    ap.add_argument("--fixed-rows", type=int, default=8, help="pairs of the short run that measures the fixed cost")
    ap.add_argument("--symbols", type=int, default=0, metavar="N",
                    help="also profile one run of --fixed-rows pairs per binary and print the N symbols outside the "
                         "GEMM kernels whose CPU grows most from it to the long run, in us per further real token "
                         "(the marginal figure, symbol by symbol)")
    ap.add_argument("--ref-set", action="append", default=None,
                    help="--set for the ref run only (replaces --set there); without --ref-binary the ref is this attnscan")
    a = ap.parse_args()
    if subprocess.run(["perf", "--version"], capture_output=True).returncode != 0:
        sys.exit("overhead_bench: needs perf (Debian package linux-perf)")
    require_built(a.build, "pipeline/attnscan", "bench/forward_bench", "bench/libtorch_load_floor")
    binary = os.path.join(a.build, "pipeline", "attnscan")
    model, dataset = os.path.abspath(a.model), os.path.abspath(a.dataset)
    out_dir = a.out_dir or tempfile.mkdtemp(prefix="overhead_bench_")
    os.makedirs(out_dir, exist_ok=True)
    cores = len(os.sched_getaffinity(0))
    print(subprocess.run([binary, "info"], capture_output=True, text=True, check=True).stdout.strip())
    peak, line = gemm_peak(a.build)
    print(f"{line}\ncores: {cores}; load average before: {loadavg()}")

    floor_runs = [timed([os.path.join(a.build, "bench", "libtorch_load_floor")], os.path.join(out_dir, "floor.log"))
                  for _ in range(5)]
    floor_cpu, floor_wall = (statistics.median(r[i] for r in floor_runs) for i in (1, 0))
    print(f"LibTorch's load alone (bench/libtorch_load_floor, median of 5): cpu {floor_cpu:.2f} s, wall {floor_wall:.2f} s")

    configs = {rows: write_run_config(os.path.join(out_dir, f"overhead.{rows}.yaml"), model, dataset, True, 1, 2, rows)
               for rows in (a.rows, a.fixed_rows)}
    binaries = {"attnscan": binary}
    if a.ref_binary or a.ref_set is not None:
        binaries["ref"] = os.path.abspath(a.ref_binary or binary)
    sets = {"attnscan": a.set, "ref": a.set if a.ref_set is None else a.ref_set}
    def attnscan_run(name, tag, profile, rows=a.rows):
        """One run; its output is deleted once read, so the next run writes into page cache pages the
        kernel has had before (see --no-warm-up)."""
        out = os.path.join(out_dir, f"{name}.{tag}.h5")
        data = os.path.join(out_dir, f"{name}.{tag}.perf")
        args = [binaries[name], "run", "-c", configs[rows], "-o", out, "--overwrite", "--no-progress"]
        if profile:
            args = ["perf", "record", "-q", "-F", "499", "-o", data, "--"] + args
        for s in sets[name]:
            args += ["--set", s]
        wall, cpu, rss = timed(args, os.path.join(out_dir, f"{name}.{tag}.log"))
        n = n_tokens_of(out)
        os.remove(out)
        return cpu, wall, rss, n, data

    if a.warm_up:
        cpu, wall, _, _, _ = attnscan_run("attnscan", "warm-up", False)
        print(f"warm-up run (not counted): wall {wall:6.2f} s  cpu {cpu:6.2f} s", flush=True)
    runs = {name: [] for name in binaries}
    short_runs = {name: [] for name in binaries}
    for rep in range(a.n):
        for name in binaries:
            run = attnscan_run(name, rep, True)
            runs[name].append(run)
            cpu, wall, rss = run[:3]
            short = attnscan_run(name, f"{rep}.short", False, a.fixed_rows)
            short_runs[name].append(short)
            print(f"rep {rep + 1}/{a.n} {name:<9} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak RSS {rss / 1024:5.0f} MiB; "
                  f"{a.fixed_rows} pairs: cpu {short[0]:5.2f} s", flush=True)
    profiled_short = {name: attnscan_run(name, "short.profiled", True, a.fixed_rows) for name in binaries} if a.symbols else {}

    for name, reps in runs.items():
        cpu, wall, rss, n, data = sorted(reps, key=lambda r: r[0])[len(reps) // 2]
        tokens = int(n.sum())
        _, executed = model_flops(model, n)
        per_core = peak / cores * 1e9
        shares = profile_split(data, binaries[name])
        gemm = shares[BUCKETS[0][0]]
        us = lambda s: s * 1e6 / tokens
        print(f"\n{name}: {len(n)} pairs, {tokens} real tokens; median CPU {cpu:.2f} s (wall {wall:.2f} s, "
              f"peak RSS {rss / 1024:.0f} MiB); executed GEMM FLOPs {executed / 1e9:.0f} G = "
              f"{executed / per_core:.2f} CPU s at the per-core peak")
        print(f"  outside GEMM (FLOPs): {us(cpu - executed / per_core):7.1f} us of CPU per real token")
        print(f"  outside GEMM (perf):  {us(cpu * (1 - gemm)):7.1f} us of CPU per real token "
              f"(GEMM kernels {gemm:.1%} of the samples, {us(cpu * gemm):.1f} us/token)")
        short_cpu, short_n = statistics.median(r[0] for r in short_runs[name]), short_runs[name][0][3]
        fixed = fixed_cpu(short_cpu, short_n, model, per_core)
        further = lambda outside: per_further_token(outside, fixed, n, short_n)
        print(f"  fixed per run:        {fixed:7.2f} CPU s (median of {len(short_runs[name])} runs of "
              f"{len(short_n)} pairs: {us(fixed):.1f} us/token of this run), of which LibTorch's load {floor_cpu:.2f}")
        print(f"  marginal outside GEMM:{further(cpu - executed / per_core):7.1f} us of CPU per further real token (FLOPs), "
              f"{further(cpu * (1 - gemm)):.1f} (perf)")
        if len(reps) > 1:
            spread = marginal_by_repetition(reps, short_runs[name], binaries[name], model, per_core)
            print(f"  marginal (perf), each repetition less its own short run: {min(spread):.1f} to {max(spread):.1f} "
                  f"us per further real token ({', '.join(f'{v:.1f}' for v in spread)})")
        print(f"  {'bucket':<40} {'share':>7} {'us/token':>9}")
        for bucket, share in sorted(shares.items(), key=lambda kv: -kv[1]):
            print(f"  {bucket:<40} {share:7.1%} {us(cpu * share):9.1f}")
        if name in profiled_short:
            s_cpu, _, _, s_n, s_data = profiled_short[name]
            long_cpu, short_cpu = symbol_cpu(data, binaries[name], cpu), symbol_cpu(s_data, binaries[name], s_cpu)
            grown = {k: long_cpu.get(k, 0.0) - short_cpu.get(k, 0.0) for k in set(long_cpu) | set(short_cpu)}
            further_tokens = tokens - int(s_n.sum())
            outside = sorted(((v, k) for k, v in grown.items() if k[0] != BUCKETS[0][0]), reverse=True)
            print(f"  marginal outside GEMM by symbol (this run's profile less one of {len(s_n)} pairs): "
                  f"{sum(v for v, _ in outside) * 1e6 / further_tokens:.1f} us per further real token in all")
            for v, (bucket, dso, sym) in outside[:a.symbols]:
                print(f"  {v * 1e6 / further_tokens:7.1f}  {dso[:24]:<24} {sym[:70]:<70} ({bucket})")
    if "ref" in runs:
        med = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
        print(f"\nCPU ref / attnscan: {med['ref'] / med['attnscan']:.3f}")


if __name__ == "__main__":
    main()
