#!/usr/bin/env python3
"""Files of format_version 1 and 2 (counts and offsets stored unsigned: uint32/uint64), 3 (no
tokens/char_start, char_end), 4 (one baseline per example, not per layer) and 5 (no checksums of the text
columns) and 6 (attention/values never virtual) read in every reader as version 7 files do: verify, heads,
compare, similarity, report, plot and merge give the same answers, and merge writes version 7 (offsets -1
where the input had none, the baseline given to every layer, the text checksummed); verify says which
files' text it could not check.

usage: old_layouts_test.py ATTNSCAN_BINARY
Runs on data/sample_pairs.tsv and the default model (exit 77 when the model is absent).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
# What format_version 1 and 2 stored as unsigned, version 3 as int64.
UNSIGNED_BEFORE_3 = {"examples/token_offset": np.uint64, "examples/n_tokens": np.uint32,
                     "examples/tokens_a": np.uint32, "examples/tokens_b": np.uint32}


def main(binary):
    model = os.environ.get("ATTNSCAN_MODEL") or str(Path.home() / ".cache/attnscan/models/all-MiniLM-L6-v2")
    if not (Path(model) / "model.safetensors").is_file():
        print(f"SKIP: model {model} absent (set ATTNSCAN_MODEL or run scripts/setup.sh)")
        return 77
    tmp = Path(tempfile.mkdtemp(prefix="attnscan-old-layouts-"))
    try:
        return check(binary, model, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(binary, *args, cwd=ROOT):
    p = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"attnscan {' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


CHAR_OFFSETS = ("tokens/char_start", "tokens/char_end")  # format_version 4 on
NEWEST = 7  # 7 differs from 6 only where attention/values is virtual (merge --virtual)
FIRST_TEXT_CHECKSUMS = 6


def downgrade(src, dst, version):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        text_sums = []  # before 6: no NAME_crc32 beside the text columns
        f.visititems(lambda name, obj: text_sums.append(name) if name.endswith("_crc32") else None)
        assert len(text_sums) >= 8, text_sums
        for name in (text_sums if version < FIRST_TEXT_CHECKSUMS else ()):
            del f[name]
        for key in (f["scores"].attrs["outputs"] if version < 5 else ()):  # scores/KEY/baseline [N] (MiniLM: layers alike)
            name = f"scores/{key}/baseline"
            per_layer = f[name][...]
            assert np.array_equal(per_layer, np.repeat(per_layer[:, :1], per_layer.shape[1], axis=1), equal_nan=True), name
            del f[name]
            f.create_dataset(name, data=per_layer[:, 0], chunks=(4096,), maxshape=(None,), fletcher32=version >= 2)
        for name in (CHAR_OFFSETS if version < 4 else ()):
            del f[name]
        for name, dtype in (UNSIGNED_BEFORE_3.items() if version < 3 else ()):
            data = f[name][...]
            chunks = f[name].chunks
            del f[name]
            f.create_dataset(name, data=data.astype(dtype), chunks=chunks, maxshape=(None,), fletcher32=version >= 2)
        f.attrs["format_version"] = version
        if version == 1:
            del f["attention/checksums"]


def check(binary, model, tmp):
    newest = tmp / f"v{NEWEST}.h5"  # the newest version: the reference the older ones are compared with
    run(binary, "run", "-c", "configs/default.yaml", "--model", model, "--set", "detectors=next_token,delimiter",
        "--set", "output.attention_every=2", "-o", str(newest), "--no-progress")
    with h5py.File(newest, "r") as f:
        assert f.attrs["format_version"] == NEWEST, f.attrs["format_version"]
        assert f["scores/next_token/next_token/baseline"].shape == (len(f["examples/id"]), 6)
        assert (f["tokens/char_end"][...] >= f["tokens/char_start"][...]).all()
        assert (f["tokens/char_start"][...] >= 0).any()
        for name in list(UNSIGNED_BEFORE_3) + ["examples/attention_offset"]:
            assert f[name].dtype == np.int64, (name, f[name].dtype)
        assert (f["examples/attention_offset"][1::2] == -1).all()
    files = {NEWEST: newest}
    for version in (6, 5, 4, 3, 2, 1):
        files[version] = tmp / f"v{version}.h5"
        downgrade(newest, files[version], version)
    answers = {}
    for version, path in files.items():
        a = {}
        verify = run(binary, "verify", str(path))
        assert "rows sum to 1" in verify, verify
        if version >= 2:
            assert ("CRC-32 of every text row" in verify) == (version >= FIRST_TEXT_CHECKSUMS), verify
            assert (f"its text columns carry no checksums (format_version {version})" in verify) == \
                (version < FIRST_TEXT_CHECKSUMS), verify
        a["heads"] = run(binary, "heads", str(path), "--format", "csv")
        a["compare"] = run(binary, "compare", str(newest), str(path), "--format", "csv", "--resamples", "100")
        sim = tmp / f"sim-v{version}.h5"
        shutil.copy(path, sim)
        run(binary, "similarity", str(sim))
        with h5py.File(sim, "r") as f:
            a["similarity"] = f["analysis/head_similarity/js_divergence"][...].round(6).tolist()
        run(binary, "report", str(path), "-o", str(tmp / f"report-v{version}.html"))
        figures = tmp / f"figures-v{version}"
        run(binary, "plot", str(path), "-o", str(figures), "--example", "2", "--layer", "0", "--head", "0")  # id: line 2
        a["plot"] = sorted(p.name for p in figures.iterdir())
        merged = tmp / f"merged-v{version}.h5"
        run(binary, "merge", str(merged), str(path))
        with h5py.File(merged, "r") as f, h5py.File(newest, "r") as ref:
            assert f.attrs["format_version"] == NEWEST
            for name in ("examples/sentence_a", "tokens/text"):  # merge checksums the text it writes
                assert list(f[name + "_crc32"][...]) == [zlib.crc32(s) for s in f[name][...]], name
            for key in ref["scores"].attrs["outputs"]:  # merged per layer, as the newest version stores it
                name = f"scores/{key}/baseline"
                assert np.array_equal(f[name][...], ref[name][...], equal_nan=True), name
            for name in UNSIGNED_BEFORE_3:
                assert f[name].dtype == np.int64 and (f[name][...] == ref[name][...]).all(), name
            for name in CHAR_OFFSETS:  # carried by merge; -1 where the input had none
                want = ref[name][...] if version >= 4 else np.full(len(ref[name]), -1)
                assert f[name].dtype == np.int64 and (f[name][...] == want).all(), name
        answers[version] = a
        print(f"format_version {version}: verify, heads, compare, similarity, report, plot, merge ok")
    for version in (6, 5, 4, 3, 2, 1):
        for what in answers[NEWEST]:
            assert answers[version][what] == answers[NEWEST][what], \
                f"format_version {version}: {what} differs from version {NEWEST}"
    # The recipe's question about an example without attention gets the documented answer.
    p = subprocess.run([binary, "plot", str(files[2]), "-o", str(tmp / "none"), "--example", "3", "--layer", "0",
                        "--head", "0"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode != 0 and "has no stored attention" in p.stderr, p.stdout + p.stderr
    print("no stored attention:", p.stderr.strip())
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} ATTNSCAN_BINARY")
    sys.exit(main(sys.argv[1]))
