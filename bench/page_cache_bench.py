#!/usr/bin/env python3
"""What writing attention costs the kernel: through the page cache, kept or handed back, or past it.

  /usr/bin/python3 bench/page_cache_bench.py [--dir DIR] [--mb 2000] [--chunk-kb 800] [--block-mb 100] [-n 2]

Writes --mb MiB into a new file in DIR as `attnscan run` writes uncompressed attention: one pwrite per
pair (--chunk-kb: 800 KiB is one all-mpnet-base-v2 pair of 53 tokens in fp16), an fdatasync per block
(--block-mb), in three modes, alternating, -n times each:

  keep    the written pages stay in the page cache (the kernel's default for buffered writes)
  drop    after each block's fdatasync, posix_fadvise(POSIX_FADV_DONTNEED) on the block's range (what
          OutputSession::commit does now)
  direct  O_DIRECT writes from page-aligned memory, past the page cache (measured in a run and left out:
          docs/performance.md, "Measured and not done"); skipped where the file system
          refuses O_DIRECT

and prints the kernel CPU (ru_stime) and wall per GiB written, keep / drop and drop / direct. Every file
stays until the end, as a run's output does, so the keep mode meets the page cache as a long run leaves
it. DIR must be on a disk file system (on tmpfs the hint does nothing); it defaults to the current
directory.
"""
import argparse
import mmap
import os
import resource
import statistics
import sys
import tempfile
import time


def write_file(path, total, chunk, block, mode):
    """Returns (kernel CPU s, wall s) of writing `total` bytes to `path` in `mode`."""
    data = mmap.mmap(-1, chunk)  # page-aligned, as O_DIRECT asks
    data.write(os.urandom(chunk))
    flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | (os.O_DIRECT if mode == "direct" else 0)
    fd = os.open(path, flags, 0o644)
    try:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        t0 = time.perf_counter()
        synced = 0
        for offset in range(0, total, chunk):
            os.pwrite(fd, data, offset)
            end = offset + chunk
            if end - synced >= block or end >= total:
                os.fdatasync(fd)
                if mode == "drop":
                    os.posix_fadvise(fd, synced, end - synced, os.POSIX_FADV_DONTNEED)
                synced = end
        wall = time.perf_counter() - t0
        return resource.getrusage(resource.RUSAGE_SELF).ru_stime - before, wall
    finally:
        os.close(fd)
        data.close()


def takes_direct_io(directory):
    path = os.path.join(directory, "direct_io_probe")
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644))
        return True
    except OSError:
        return False
    finally:
        if os.path.exists(path):
            os.remove(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=".")
    ap.add_argument("--mb", type=int, default=2000)
    ap.add_argument("--chunk-kb", type=int, default=800)
    ap.add_argument("--block-mb", type=int, default=100)
    ap.add_argument("-n", type=int, default=2)
    a = ap.parse_args()
    if a.mb <= 0 or a.chunk_kb <= 0 or a.block_mb <= 0 or a.n <= 0:
        sys.exit("page_cache_bench: --mb, --chunk-kb, --block-mb and -n must be positive")
    if a.chunk_kb % 4:
        sys.exit("page_cache_bench: --chunk-kb must be a multiple of 4 (O_DIRECT writes whole pages)")
    if not os.path.isdir(a.dir):
        sys.exit(f"page_cache_bench: --dir {a.dir}: not a directory")
    total, chunk, block = a.mb << 20, a.chunk_kb << 10, a.block_mb << 20
    gib = total / (1 << 30)
    with tempfile.TemporaryDirectory(dir=a.dir, prefix="page_cache_bench.") as tmp:
        print(f"{a.mb} MiB per file in {a.chunk_kb} KiB writes, fdatasync every {a.block_mb} MiB, in {tmp}")
        modes = ["keep", "drop"] + (["direct"] if takes_direct_io(tmp) else [])
        if "direct" not in modes:
            print(f"{tmp}: the file system refuses O_DIRECT; the direct mode is skipped")
        results = {m: [] for m in modes}
        for rep in range(a.n):
            for mode in modes:
                sys_s, wall = write_file(os.path.join(tmp, f"{mode}.{rep}"), total, chunk, block, mode)
                results[mode].append((sys_s, wall))
                print(f"rep {rep + 1}/{a.n} {mode}: kernel CPU {sys_s / gib:6.2f} s/GiB, wall {wall / gib:6.2f} s/GiB")
        med = {m: (statistics.median(s for s, _ in r), statistics.median(w for _, w in r)) for m, r in results.items()}
        for mode, (sys_s, wall) in med.items():
            print(f"{mode}: median kernel CPU {sys_s / gib:.2f} s/GiB, wall {wall / gib:.2f} s/GiB")
        if med["drop"][0] > 0:
            print(f"kernel CPU keep / drop: {med['keep'][0] / med['drop'][0]:.2f}")
        if "direct" in med and med["direct"][0] > 0:
            print(f"kernel CPU drop / direct: {med['drop'][0] / med['direct'][0]:.2f}")


if __name__ == "__main__":
    main()
