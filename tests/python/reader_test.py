#!/usr/bin/env python3
"""The Python reader (python/attnscan) on files that `attnscan run` / `merge` write here: every value
it hands out equals what h5py reads with the recipes of docs/hdf5-layout.md (tests/e2e/h5_recipes.py),
and to_hf equals Hugging Face's output_attentions for the same pair.

  reader_test.py ATTNSCAN_BINARY TEST_NAME     ("all" runs each)

Exit 0 on success, 1 on failure, 77 when something needed is absent (the message says what).
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnscan  # noqa: E402
from h5_recipes import attention as recipe_attention  # noqa: E402
from h5_recipes import tokens as recipe_tokens  # noqa: E402
from harness import Skip, model_dir  # noqa: E402
from harness import main as harness_main  # noqa: E402
from conllu_reference import read_conllu  # noqa: E402

BIN = WORK = None
CACHE = os.environ.get("ATTNSCAN_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnscan")
VENV_PYTHON = os.path.join(CACHE, "tools-venv", "bin", "python")  # scripts/setup.sh makes it
LABELS = ("yes", "no", "maybe")


def out(name):
    return os.path.join(WORK, name)


def attnscan_cli(*args, check=True):
    p = subprocess.run([BIN, *args], cwd=ROOT, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"attnscan {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


# Words that match only by their stem (for a detector configured twice, exact and stem).
STEM_PAIRS = ("She plays and played games.\tPlaying is fun.", "The runner runs.\tWe walked while walking home.")


def pairs_file(rows=24, extra=()):
    """`rows` distinct pairs from data/sample_pairs.tsv's sentences with a string label (row 5's empty),
    then the `extra` pairs (labelled "extra")."""
    lines = open(os.path.join(ROOT, "data", "sample_pairs.tsv"), encoding="utf-8").read().splitlines()[1:]
    a = [r.split("\t")[0] for r in lines]
    b = [r.split("\t")[1] for r in lines]
    path = out("pairs.tsv")
    with open(path, "w", encoding="utf-8") as f:
        f.write("sentence1\tsentence2\tlabel\n")
        for k in range(rows):
            label = "" if k == 5 else LABELS[k % 3]
            f.write(f"{a[k % 10]}\t{b[(k * 3) % 10]}{' ' + a[k // 10] if k >= 10 else ''}\t{label}\n")
        for pair in extra:
            f.write(pair + "\textra\n")
    return path


def run_file(name, data, *sets, detectors="next_token,delimiter,same_sentence_match", shard=None, label="label"):
    path = out(name)
    args = ["run", "--set", "dataset.path=" + data, "--set", "dataset.label=" + label, "--set", "detectors=" + detectors,
            "-o", path, "--no-progress"]
    for s in sets:
        args += ["--set", s]
    if shard:
        args += ["--shard", shard]
    attnscan_cli(*args)
    return path


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def check_against_h5py(path):
    """Every example, token, attention value, score and aggregate the reader gives equals the recipe's."""
    with attnscan.open(path) as r, h5py.File(path, "r") as f:
        n = len(f["examples/index"])
        assert len(r) == n and r.counts["examples_written"] == n, (len(r), r.counts)
        assert r.format_version == f.attrs["format_version"] and r.model["sha256"] == f.attrs["model_sha256"]
        assert r.model["config"]["model_type"] == "bert" and r.dataset["sha256"] == f.attrs["dataset_sha256"]
        g = f["attention"]
        assert r.layers == list(g.attrs["layers"]) and r.heads == list(g.attrs["heads"]), (r.layers, r.heads)
        assert r.attention_dtype == g.attrs["dtype"] == r.config["output"]["dtype"]
        assert r.compression == g.attrs["compression"] == r.config["output"]["compression"]
        outputs = list(f["scores"].attrs["outputs"])
        assert r.outputs == outputs
        for d in r.detectors:
            a = f["scores/" + d["name"]].attrs
            assert (d["version"], d["parameters"], d["plugin"]) == (a["version"], a["parameters"], a["plugin"]), d
            assert d["plugin_sha256"] and len(d["plugin_sha256"]) == 64, d
        streamed = list(r)  # the streaming iterator must give what example(i) gives
        assert [e.position for e in streamed] == list(range(n))
        with_attention = 0
        for i in range(n):
            e = r.example(i)
            s = streamed[i]
            assert (e.id, e.sentence_a, e.label) == (s.id, s.sentence_a, s.label) and e.tokens == s.tokens
            assert e.id == f["examples/id"].asstr()[i] and e.sentence_b == f["examples/sentence_b"].asstr()[i]
            assert e.index == f["examples/index"][i] and e.row == f["examples/row"][i]
            has = bool(f["examples/has_label"][i])
            assert e.label == (f["examples/label"].asstr()[i] if has else None), (e.label, has)
            assert [t.text for t in e.tokens] == recipe_tokens(f, i)
            t0, k = int(f["examples/token_offset"][i]), int(f["examples/n_tokens"][i])
            assert [t.id for t in e.tokens] == list(f["tokens/id"][t0:t0 + k])
            assert [t.sentence for t in e.tokens] == list(f["tokens/segment"][t0:t0 + k])
            assert [t.word_index for t in e.tokens] == list(f["tokens/word_index"][t0:t0 + k])
            assert [t.word for t in e.tokens] == list(f["tokens/word"].asstr()[t0:t0 + k])
            special = f["tokens/special"][t0:t0 + k]
            roles = ["Content" if not sp else "SpecialInText" if w >= 0 else "Begin" if p == 0 else "Separator"
                     for p, (sp, w) in enumerate(zip(special, f["tokens/word_index"][t0:t0 + k]))]
            assert [t.role for t in e.tokens] == roles and roles[0] == "Begin" and roles[-1] == "Separator"
            assert e.sentence_b_start == int(np.argmax(f["tokens/segment"][t0:t0 + k] == 1))
            if "tokens/char_start" in f:  # format_version 4 on
                assert [t.char_start for t in e.tokens] == list(f["tokens/char_start"][t0:t0 + k])
                assert [t.char_end for t in e.tokens] == list(f["tokens/char_end"][t0:t0 + k])
                for t in e.tokens:  # content pieces cover their text; template specials have no span
                    text = (e.sentence_b if t.sentence else e.sentence_a)[t.char_start:t.char_end]
                    if t.role == "Content":
                        assert text and 0 <= t.char_start < t.char_end, (t, text)
                    if t.role in ("Begin", "Separator"):
                        assert (t.char_start, t.char_end) == (-1, -1), t
            expected = recipe_attention(f, i)
            assert e.has_attention == (expected is not None)
            if expected is None:
                expect_error(attnscan.NotStoredError, lambda: e.attention, f"example {i} has no stored attention")
                continue
            with_attention += 1
            assert e.attention.dtype == np.float32 and e.attention.shape == expected.shape
            worst = float(np.abs(e.attention - expected).max())
            assert worst <= (1e-7 if r.attention_dtype == "uint8" else 0.0), (path, i, worst)
            assert same(e.head(r.layers[-1], r.heads[0]), e.attention[-1, 0])
        assert with_attention == int(r.has_attention().sum())
        for key in outputs:
            s, g = r.scores(key), f["scores/" + key]
            assert same(s.values, g["values"][...]) and same(s.baseline, g["baseline"][...]), key
            assert s.values.shape == (n, r.model_layers, r.model_heads)  # every model head, whatever is stored
            agg = r.aggregates(key)
            for name in ("mean", "std", "count", "ci_low", "ci_high", "baseline_mean"):
                assert same(agg[name], g[name][...]), (key, name)
            assert agg["ci_method"] == g.attrs["ci_method"]
        for label in LABELS:
            expected = [i for i in range(n) if f["examples/has_label"][i] and f["examples/label"].asstr()[i] == label]
            assert [e.position for e in r.where(label=label)] == expected, label
            assert list(r.where(label=label).positions) == expected
        return n, with_attention


def expect_error(kind, fn, *phrases):
    try:
        fn()
    except kind as e:
        for p in phrases:
            assert p in str(e), (p, str(e))
        return str(e)
    raise AssertionError(f"no {kind.__name__} raised (expected one saying {phrases})")


# --- tests -------------------------------------------------------------------------------------------

def test_every_dtype_compression_and_subset_equal_h5py():
    """fp16/fp32/uint8, none/deflate/lz4, all and subset layers and heads, attention every row and every 3rd."""
    model_dir()
    data = pairs_file()
    runs = [("f16.h5", "output.dtype=float16", "output.compression=none"),
            ("f32_deflate_subset.h5", "output.dtype=float32", "output.compression=deflate", "output.layers=1,3",
             "output.heads=0-2,7"),
            ("u8_lz4_every3.h5", "output.dtype=uint8", "output.compression=lz4", "output.layers=5", "output.heads=11",
             "output.attention_every=3"),
            ("f16_deflate_blocks.h5", "output.dtype=float16", "output.compression=deflate", "pipeline.block_rows=5")]
    for name, *sets in runs:
        path = run_file(name, data, *sets)
        n, stored = check_against_h5py(path)
        print(f"{name}: {n} examples, {stored} with attention: equal to the h5py recipes")
        assert n == 24 and stored == (8 if "every3" in name else 24), (n, stored)
    with attnscan.open(out("u8_lz4_every3.h5")) as r:
        expect_error(attnscan.NotStoredError, lambda: r.example(0).head(4, 11), "layer 4 is not stored", "stored layers: 5")
        expect_error(attnscan.NotStoredError, lambda: r.to_circuitsvis(0, 2), "layer 2 is not stored")
        expect_error(IndexError, lambda: r.example(24), "example 24 out of range", "24 examples")
        assert r.example(-1).position == 23
        e = r.example(0)
        assert abs(float(e.attention.sum(-1).mean()) - 1) < 5e-3  # rows sum to 1 after decoding uint8


def test_scores_only_and_aliases():
    """output.attention_every=0 with an `as:` alias: scores equal those of a run storing attention;
    asking for attention is a clear error."""
    model_dir()
    data = pairs_file(extra=STEM_PAIRS)
    cfg = out("alias.yaml")
    with open(cfg, "w") as f:
        f.write(f"dataset:\n  path: {data}\n  label: label\ndetectors:\n  - same_sentence_match\n"
                "  - {name: same_sentence_match, match: stem, as: same_sentence_stem}\n  - delimiter\n")
    paths = {}
    for name, sets in (("scores_only.h5", ["output.attention_every=0", "output.compression=deflate"]),
                       ("with_attention.h5", [])):
        paths[name] = out(name)
        args = ["run", "-c", cfg, "-o", paths[name], "--no-progress"]
        for s in sets:
            args += ["--set", s]
        attnscan_cli(*args)
    check_against_h5py(paths["scores_only.h5"])
    with attnscan.open(paths["scores_only.h5"]) as r, attnscan.open(paths["with_attention.h5"]) as full:
        assert r.config["output"]["attention_every"] == 0 and not r.has_attention().any()
        alias = next(d for d in r.detectors if d["name"] == "same_sentence_stem")
        assert alias["plugin"] == "same_sentence_match" and alias["parameters"] == "match=stem", alias
        assert alias["outputs"] == ["same_sentence_match"] and alias["version"] == "1.0", alias
        assert r.resolve("same_sentence_stem") == "same_sentence_stem/same_sentence_match"
        for key in full.outputs:
            assert same(r.scores(key).values, full.scores(key).values), key
        assert not same(r.scores("same_sentence_stem").values, r.scores("same_sentence_match").values)
        msg = expect_error(attnscan.NotStoredError, lambda: r.example(3).attention, "example 3 has no stored attention")
        print("scores only:", msg)
        expect_error(attnscan.NotStoredError, lambda: r.to_hf(3), "no stored attention")
        expect_error(attnscan.NotStoredError, lambda: r.scores("delimiter"), "several outputs", "delimiter/sep")
        expect_error(attnscan.NotStoredError, lambda: r.scores("entropy"), "no detector output 'entropy'")
        expect_error(attnscan.NotStoredError, lambda: r.head_similarity(), "attnscan similarity")


def test_value_norms_and_rollout_equal_h5py():
    """Example.value_norms and .rollout equal the h5py recipe of docs/analyses.md; a file without them
    names the option to set; the scores group's map is in the provenance."""
    model_dir()
    data = pairs_file()
    cfg = out("maps.yaml")
    with open(cfg, "w") as f:
        f.write(f"dataset:\n  path: {data}\n  label: label\noutput:\n  value_norms: true\n  rollout: true\n"
                "  attention_every: 3\ndetectors:\n  - {name: delimiter, as: delimiter_norm, map: norm}\n")
    path = out("maps.h5")
    attnscan_cli("run", "-c", cfg, "-o", path, "--no-progress")
    with attnscan.open(path) as r, h5py.File(path, "r") as f:
        L = int(f["attention"].attrs["model_layers"])
        starts = np.concatenate([[0], np.cumsum(L * f["examples/n_tokens"][...].astype(np.int64) ** 2)])
        for i, e in enumerate(r):
            t, n = int(f["examples/token_offset"][i]), int(f["examples/n_tokens"][i])
            assert same(e.value_norms, f["tokens/value_norm"][t:t + n].transpose(1, 2, 0)), i
            assert same(e.rollout, f["rollout/values"][starts[i]:starts[i + 1]].reshape(L, n, n)), i
            assert np.allclose(e.rollout.sum(axis=-1), 1, atol=1e-5), i
        assert f["scores/delimiter_norm"].attrs["map"] == "norm"
    plain = run_file("plain.h5", data)
    with attnscan.open(plain) as r:
        expect_error(attnscan.NotStoredError, lambda: r.example(0).value_norms, "output.value_norms")
        expect_error(attnscan.NotStoredError, lambda: r.example(0).rollout, "output.rollout")


def test_shards_merged_read_as_a_single_run():
    model_dir()
    data = pairs_file()
    sets = ("pipeline.block_rows=5", "output.dtype=float16")
    single = run_file("single.h5", data, *sets)
    shards = [run_file(f"shard{i}.h5", data, *sets, shard=f"{i}/3") for i in range(3)]
    attnscan_cli("merge", out("merged.h5"), *shards)
    n, _ = check_against_h5py(out("merged.h5"))
    with attnscan.open(single) as x, attnscan.open(out("merged.h5")) as y:
        assert y.shard == (0, 1) and len(x) == len(y) == n
        for a, b in zip(x, y):
            assert (a.id, a.tokens, a.label) == (b.id, b.tokens, b.label) and same(a.attention, b.attention)
        for key in x.outputs:
            assert same(x.scores(key).values, y.scores(key).values), key
    parts = 0
    for i, s in enumerate(shards):
        check_against_h5py(s)
        with attnscan.open(s) as r:
            assert r.shard == (i, 3), r.shard
            parts += len(r)
    assert parts == n, (parts, n)


def rewrite_as(f, name, dtype):
    data = f[name][...]
    del f[name]
    f.create_dataset(name, data=data.astype(dtype), chunks=True)


# How format_version 1 and 2 stored the counts and offsets that version 3 stores as signed int64.
UNSIGNED_BEFORE_3 = {"examples/token_offset": np.uint64, "examples/n_tokens": np.uint32,
                     "examples/tokens_a": np.uint32, "examples/tokens_b": np.uint32}


def test_format_versions_offset_types_and_bad_files():
    """format_version 5 (a baseline per layer), 4 (one baseline per example: the same on every layer),
    3 (without tokens/char_start, char_end: Token.char_start/char_end -1), 2 (counts and offsets unsigned)
    and 1 (unsigned, no checksums) read the same; a newer version, a non-attnscan file, a missing dataset
    and a missing file are named errors."""
    model_dir()
    v3, v2, v1, old, newer, broken = (out("v3.h5"), out("v2.h5"), out("v1.h5"), out("v4.h5"), out("v7.h5"),
                                      out("broken.h5"))
    v4 = run_file("v5.h5", pairs_file(12), "output.attention_every=2")  # the newest: the reference
    for p in (v3, v2, v1, old, newer, broken):
        shutil.copy(v4, p)
    with h5py.File(old, "r+") as f:  # what format_version 4 stored: scores/KEY/baseline [N]
        for key in f["scores"].attrs["outputs"]:
            per_layer = f[f"scores/{key}/baseline"][...]
            del f[f"scores/{key}/baseline"]
            f.create_dataset(f"scores/{key}/baseline", data=per_layer[:, 0], maxshape=(None,), chunks=True)
        f.attrs["format_version"] = 4
    with attnscan.open(v4) as ref, attnscan.open(old) as r:
        for key in ref.outputs:
            assert ref.scores(key).baseline.shape == (len(ref), ref.model_layers), key
            assert same(ref.scores(key).baseline, r.scores(key).baseline), key
    with h5py.File(v3, "r+") as f:  # what format_version 3 stored: no character offsets
        del f["tokens/char_start"], f["tokens/char_end"]
        f.attrs["format_version"] = 3
    with h5py.File(v4, "r") as f:
        assert f.attrs["format_version"] == 7
        for c in list(UNSIGNED_BEFORE_3) + ["examples/attention_offset"]:
            assert f[c].dtype == np.int64, (c, f[c].dtype)
    for p, version in ((v2, 2), (v1, 1)):
        with h5py.File(p, "r+") as f:
            for c, dtype in UNSIGNED_BEFORE_3.items():
                rewrite_as(f, c, dtype)
            f.attrs["format_version"] = version
            if version == 1:
                del f["attention/checksums"]
    with h5py.File(newer, "r+") as f:
        f.attrs["format_version"] = 8
    with h5py.File(broken, "r+") as f:
        del f["tokens/word_index"]
    with attnscan.open(v4) as ref:
        with attnscan.open(v3) as r:  # the same tokens, offsets unknown
            for a, b in zip(ref, r):
                assert any(t.char_start >= 0 for t in a.tokens)
                assert [t._replace(char_start=-1, char_end=-1) for t in a.tokens] == b.tokens
        for p in (v2, v1):
            with h5py.File(p, "r+") as f:
                del f["tokens/char_start"], f["tokens/char_end"]
            check_against_h5py(p)
            with attnscan.open(p) as r:
                for a, b in zip(ref, r):
                    assert ([t._replace(char_start=-1, char_end=-1) for t in a.tokens], a.index, a.row,
                            a.has_attention) == (b.tokens, b.index, b.row, b.has_attention)
                    if a.has_attention:
                        assert same(a.attention, b.attention)
        assert [e.has_attention for e in ref] == [i % 2 == 0 for i in range(12)]
        msg = expect_error(attnscan.NotStoredError, lambda: ref.example(1).attention, v4, "example 1",
                           "no stored attention")
        print("not stored:", msg)
    msg = expect_error(attnscan.FormatError, lambda: attnscan.open(newer), newer, "format_version 8", "1 to 7")
    print("newer:", msg)
    expect_error(attnscan.FormatError, lambda: attnscan.open(broken), broken, "tokens/word_index")
    expect_error(attnscan.FormatError, lambda: attnscan.open(out("absent.h5")), "absent.h5: no such file")
    other = out("other.h5")
    with h5py.File(other, "w") as f:
        f["x"] = [1, 2]
    expect_error(attnscan.FormatError, lambda: attnscan.open(other), "not an attnscan result")
    text = out("text.h5")
    with open(text, "w") as f:
        f.write("not hdf5\n")
    expect_error(attnscan.FormatError, lambda: attnscan.open(text), "text.h5: not a readable HDF5 file")
    unlabelled = run_file("unlabelled.h5", pairs_file(3), label="")
    check_against_h5py(unlabelled)
    with attnscan.open(unlabelled) as r:
        assert [e.label for e in r] == [None] * 3 and [e.has_label for e in r] == [False] * 3
        assert len(r.where(label="")) == 0
    r = attnscan.open(v2)
    r.close()
    expect_error(attnscan.AttnscanError, lambda: r.example(0), "the result is closed")


def hf_reference(pairs_path):
    if not os.path.exists(VENV_PYTHON):
        raise Skip(f"reference venv not found at {VENV_PYTHON} (scripts/setup.sh test makes it)")
    target = out("hf.npz")
    p = subprocess.run([VENV_PYTHON, os.path.join(HERE, "hf_attentions.py"), model_dir(), pairs_path, target],
                       capture_output=True, text=True)
    if p.returncode != 0 and "No module named 'transformers'" in p.stderr:
        raise Skip(f"transformers is not installed in {VENV_PYTHON} (scripts/setup.sh test installs it)")
    assert p.returncode == 0, p.stderr
    return np.load(target)


def test_to_hf_and_bertviz_equal_transformers():
    """to_hf of an fp16 file equals HF's output_attentions for the pair alone within 1e-3; to_bertviz's
    tokens and sentence_b_start are the HF tokenizer's; to_circuitsvis is one layer of it."""
    model_dir()
    data = pairs_file(12)
    ref = hf_reference(data)
    path = run_file("f16.h5", data, "output.dtype=float16")
    worst = 0.0
    with attnscan.open(path) as r:
        for i in range(len(r)):
            hf = r.to_hf(i)
            expected = ref[f"attention.{i}"]
            assert len(hf) == expected.shape[0] == r.model_layers
            got = np.stack([np.asarray(t)[0] for t in hf])
            assert all(tuple(t.shape) == (1,) + expected.shape[1:] for t in hf)
            worst = max(worst, float(np.abs(got - expected).max()))
            e = r.example(i)
            assert [t.id for t in e.tokens] == list(ref[f"ids.{i}"]), i
            bv = r.to_bertviz(i)
            assert list(bv) == ["attention", "tokens", "sentence_b_start"]
            assert bv["sentence_b_start"] == list(ref[f"types.{i}"]).index(1), i
            assert bv["tokens"] == [t.text for t in e.tokens] and same(np.asarray(bv["attention"][2]), np.asarray(hf[2]))
            cv = r.to_circuitsvis(i, 4)
            assert same(cv["attention"], np.asarray(hf[4])[0]) and cv["tokens"] == bv["tokens"]
            assert all(isinstance(a, np.ndarray) for a in r.to_hf(i, tensors="numpy"))
    print(f"max |to_hf - HF output_attentions| over {len(r)} pairs = {worst:.3g} (fp16 storage)")
    assert worst <= 1e-3, worst


def test_converters_of_subsets_frames_and_similarity():
    model_dir()
    data = pairs_file(12)
    path = run_file("subset.h5", data, "output.layers=1,4", "output.heads=2,5")
    attnscan_cli("similarity", path)
    with attnscan.open(path) as r, h5py.File(path, "r") as f:
        msg = expect_error(attnscan.NotStoredError, lambda: r.to_hf(0), "stores layers 1,4 of 6", "stored_only=True")
        print("subset:", msg)
        expect_error(attnscan.NotStoredError, lambda: r.to_bertviz(0), "heads 2,5 of 12")
        hf = r.to_hf(0, stored_only=True, tensors="numpy")
        a = recipe_attention(f, 0)
        assert len(hf) == 2 and all(same(hf[k][0], a[k]) for k in range(2))
        assert same(r.to_circuitsvis(0, 4)["attention"], a[1])
        sim = r.head_similarity()
        g = f["analysis/head_similarity"]
        assert r.has_head_similarity and same(sim["js_divergence"], g["js_divergence"][...]) and same(sim["mds"], g["mds"][...])
        assert list(sim["layer"]) == [1, 1, 4, 4] and list(sim["head"]) == [2, 5, 2, 5], (sim["layer"], sim["head"])
        assert sim["examples"] == g.attrs["examples"] == 12 and sim["method"] == g.attrs["method"]
        try:
            frame = r.scores_frame()
        except attnscan.MissingDependencyError as e:
            raise Skip(f"pandas is absent ({e}); the rest of this test passed")
        n, L, H = len(r), r.model_layers, r.model_heads
        assert list(frame.columns) == ["example", "label", "detector", "output", "layer", "head", "score", "baseline"]
        assert len(frame) == n * L * H * len(r.outputs), len(frame)
        row = frame[(frame["example"] == 7) & (frame["output"] == "sep") & (frame["layer"] == 3) & (frame["head"] == 9)]
        assert len(row) == 1 and row["detector"].iloc[0] == "delimiter", row
        assert row["score"].iloc[0] == f["scores/delimiter/sep/values"][7, 3, 9]
        assert row["baseline"].iloc[0] == f["scores/delimiter/sep/baseline"][7, 3]
        assert row["label"].iloc[0] == f["examples/label"].asstr()[7]
        assert (frame[frame["example"] == 5]["label"] == "").all()  # an empty label field is the label ""
        one = r.scores_frame(["next_token"])
        assert set(one["output"]) == {"next_token"} and len(one) == n * L * H
        # Compact columns (about 18 bytes a row, the size that lets 100k pairs fit), subsets and pieces.
        assert [str(t) for t in frame.dtypes] == ["int32", "category", "category", "category", "int8", "int8",
                                                  "float32", "float32"], frame.dtypes
        per_row = frame.memory_usage(deep=True).sum() / len(frame)
        print(f"scores_frame: {per_row:.1f} bytes per row")
        assert per_row <= 20, per_row
        part = r.scores_frame(["delimiter/sep"], layers=[3, 1], heads=[9])
        assert list(part["layer"]) == [1, 3] * n and set(part["head"]) == {9}, part
        assert same(part["score"].to_numpy().reshape(n, 2), f["scores/delimiter/sep/values"][:, [1, 3], 9])
        assert same(part["baseline"].to_numpy().reshape(n, 2), f["scores/delimiter/sep/baseline"][:, [1, 3]])
        expect_error(ValueError, lambda: r.scores_frame(heads=[H]), f"heads [{H}] out of range")
        import pandas as pd  # present: scores_frame() above needed it
        order = ["output", "example", "layer", "head"]
        pieces = list(r.iter_scores_frames(rows=5))
        assert [p["example"].nunique() for p in pieces] == [5, 5, 2]
        joined = pd.concat(pieces, ignore_index=True).sort_values(order, kind="stable").reset_index(drop=True)
        assert joined.equals(frame.sort_values(order, kind="stable").reset_index(drop=True))
        sel = r.where(label="no")
        assert same(sel.scores("next_token").values, f["scores/next_token/next_token/values"][...][sel.positions])
        try:
            x = r.scores_xarray("delimiter/cls")
        except attnscan.MissingDependencyError as e:
            raise Skip(f"xarray is absent ({e}); the rest of this test passed")
        assert x.dims == ("example", "layer", "head") and same(x.values, f["scores/delimiter/cls/values"][...])
        assert list(x.coords["id"].values) == list(f["examples/id"].asstr()[...])


def test_dependency_trees_equal_conllu():
    """A run on CoNLL-U trees (single sentences and consecutive pairs): every token's dep_head and
    dep_relation equal its word's entry in the file (an independent reader) and h5py's columns; specials
    carry -2 and ""; a file without trees gives None."""
    model_dir()
    conllu = os.path.join(ROOT, "data", "sample_trees.conllu")
    for pairing in ("single", "consecutive"):
        path = out(f"trees-{pairing}.h5")
        attnscan_cli("run", "--set", "dataset.format=conllu", "--set", "dataset.path=" + conllu, "--set",
                     "dataset.pairing=" + pairing, "--set", "detectors=dependency", "-o", path, "--no-progress")
        examples = read_conllu(conllu, pairing)
        checked = 0
        with attnscan.open(path) as r, h5py.File(path, "r") as f:
            assert len(r) == len(examples), (len(r), len(examples))
            heads, relations = f["tokens/dep_head"][...], f["tokens/dep_relation"].asstr()[...]
            for e, sentences in zip(r, examples):
                first = int(f["examples/token_offset"][e.position])
                for k, t in enumerate(e.tokens):
                    if t.role in ("Begin", "Separator"):
                        assert (t.dep_head, t.dep_relation) == (-2, ""), t
                    else:
                        _, head, relation = sentences[t.sentence][t.word_index]
                        assert (t.dep_head, t.dep_relation) == (head, relation), (e.id, t, head, relation)
                        checked += 1
                    assert (t.dep_head, t.dep_relation) == (int(heads[first + k]), relations[first + k]), (e.id, t)
        assert checked > 20, checked
    plain = run_file("plain-trees.h5", pairs_file(2), detectors="next_token")
    with attnscan.open(plain) as r:
        assert all(t.dep_head is None and t.dep_relation is None for t in r.example(0).tokens)
    print(f"dep_head and dep_relation of {checked} content tokens equal the CoNLL-U file (single and consecutive)")


def test_pip_install_in_a_throwaway_venv():
    """`pip install ./python` (no network: --no-build-isolation --no-deps, Debian's setuptools) gives an
    importable package that reads a file from outside the repository."""
    try:
        import setuptools  # noqa: F401
    except ImportError:
        raise Skip("python3-setuptools is not installed (scripts/setup.sh test installs it)")
    venv = out("venv")
    p = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], capture_output=True, text=True)
    if p.returncode != 0:
        raise Skip(f"python3 -m venv failed (python3-venv missing?): {p.stderr.strip()}")
    python = os.path.join(venv, "bin", "python")
    source = out("python")  # a copy: setuptools writes build/ and *.egg-info next to the sources
    shutil.copytree(os.path.join(ROOT, "python"), source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    p = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", source],
                       capture_output=True, text=True, cwd=WORK,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert p.returncode == 0, p.stdout + p.stderr
    model_dir()
    path = run_file("f.h5", pairs_file(4), "detectors=entropy")
    code = ("import sys, attnscan; r = attnscan.open(sys.argv[1]); "
            "print(attnscan.__file__); print(len(r), r.example(0).attention.shape, r.outputs)")
    p = subprocess.run([python, "-c", code, path], capture_output=True, text=True, cwd=WORK)
    assert p.returncode == 0, p.stderr
    where, summary = p.stdout.splitlines()
    assert where.startswith(venv) and "site-packages" in where, where
    assert summary.startswith("4 (6, 12, ") and "entropy/entropy" in summary, summary
    print("installed at", where)


if __name__ == "__main__":
    sys.exit(harness_main(globals()))
