#!/usr/bin/env python3
"""`attnscan compare` and `heads --ci bootstrap` checked against independent references: scipy.stats
(paired and Welch t-tests, Spearman) and numpy (CIs, effect sizes, Benjamini-Hochberg, exact
permutation distributions), and planted effects in synthetic score files.

  statistics_test.py ATTNSCAN_BINARY TEST_NAME     ("all" runs each)
"""
import itertools
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import Skip, fine_tuned_copy, model_dir  # noqa: E402
from harness import main as harness_main  # noqa: E402

try:
    from scipy import stats
except ImportError:  # pragma: no cover - the README's test command installs python3-scipy
    stats = None

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BIN = WORK = None


def out(name):
    return os.path.join(WORK, name)


def need_scipy():
    if stats is None:
        raise Skip("python3-scipy is not installed (the README's test command installs it)")


def attnscan(*args, check=True):
    p = subprocess.run([BIN, *args], cwd=ROOT, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"attnscan {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


def pairs_file(labels=None):
    """200 distinct pairs from the shipped sample's sentences, optionally with a label column."""
    rows = open(os.path.join(ROOT, "data", "sample_pairs.tsv")).read().splitlines()[1:]
    a = [r.split("\t")[0] for r in rows]
    b = [r.split("\t")[1] for r in rows]
    path = out("pairs.tsv")
    with open(path, "w") as f:
        f.write("sentence1\tsentence2" + ("\tlabel" if labels is not None else "") + "\n")
        for k, (i, j) in enumerate(itertools.product(range(10), range(20))):
            line = f"{a[i]}\t{b[j % 10]} {a[j // 2]}"
            f.write(line + (f"\t{labels[k]}" if labels is not None else "") + "\n")
    return path


def scores_run(name, data, *sets):
    path = out(name)
    args = ["run", "--set", "dataset.path=" + data, "--set", "output.attention_every=0",
            "--set", "detectors=next_token,delimiter", "-o", path, "--no-progress"]
    for s in sets:
        args += ["--set", s]
    attnscan(*args)
    return path


def bh(p):
    """Benjamini-Hochberg, written from the definition (reference for the C++ one)."""
    p = np.asarray(p, float)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    order = np.argsort(p[ok])
    ranked = p[ok][order] * ok.sum() / np.arange(1, ok.sum() + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1].clip(max=1)
    q_ok = np.empty(ok.sum())
    q_ok[order] = adjusted
    q[ok] = q_ok
    return q


def rows_by_head(report):
    return {(h["detector"], h["output"], h["layer"], h["head"]): h for h in report["heads"]}


def close(x, y, rel=1e-7, abs_=1e-10):
    if x is None:
        return not np.isfinite(y)
    return abs(x - y) <= abs_ + rel * abs(y)


# --- tests -------------------------------------------------------------------------------------------

def test_paired_compare_matches_scipy():
    model_dir()
    need_scipy()
    data = pairs_file()
    a = scores_run("fp32.h5", data)
    b = scores_run("tuned.h5", data, "model=" + fine_tuned_copy(out("tuned-model")))
    report = json.loads(attnscan("compare", a, b, "--top", "0", "--format", "json", "--resamples", "2000", "--seed", "7").stdout)
    got = rows_by_head(report)
    fa, fb = h5py.File(a, "r"), h5py.File(b, "r")
    keys = list(fa["scores"].attrs["outputs"])
    ps, order, checked = [], [], 0
    for key in keys:
        det, output = key.split("/")
        va, vb = fa[f"scores/{key}/values"][...].astype(float), fb[f"scores/{key}/values"][...].astype(float)
        for layer, head in itertools.product(range(va.shape[1]), range(va.shape[2])):
            x, y = va[:, layer, head], vb[:, layer, head]
            ok = ~(np.isnan(x) | np.isnan(y))
            d = x[ok] - y[ok]
            row = got[(det, output, layer, head)]
            assert row["n"] == ok.sum()
            order.append((det, output, layer, head))
            if d.std() == 0:
                assert row["p"] is None and row["why_nan"], row
                ps.append(np.nan)
                continue
            ref = stats.ttest_rel(x[ok], y[ok])
            se = d.std(ddof=1) / np.sqrt(len(d))
            half = stats.t.ppf(0.975, len(d) - 1) * se
            assert close(row["t"], ref.statistic, 1e-6) and close(row["p"], ref.pvalue, 1e-6, 1e-12), (row, ref)
            assert close(row["ci_low"], d.mean() - half, 1e-6, 1e-9) and close(row["ci_high"], d.mean() + half, 1e-6, 1e-9)
            assert close(row["standardized"], d.mean() / d.std(ddof=1), 1e-6), row
            ps.append(ref.pvalue)
            checked += 1
    q = bh(ps)
    for k, key in enumerate(order):
        assert close(got[key]["q"], q[k], 1e-6, 1e-12), (key, got[key]["q"], q[k])
    print(f"{checked} paired t-tests, CIs, d_z and BH q equal scipy/numpy (model vs a perturbed copy, 200 pairs)")
    # The sign-flip permutation p against its exact distribution, within Monte Carlo error.
    check_sign_flip(np.random.default_rng(5).normal(0.002, 0.004, size=12))


def check_sign_flip(planted):
    """Sign-flip p of attnscan (12 paired differences at one head) vs the exact p over all 2^12 flips."""
    a, b = synthetic_pair(planted)
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:  # the differences as stored (float32)
        d = fa["scores/next_token/next_token/values"][:, 0, 0].astype(float) - fb["scores/next_token/next_token/values"][:, 0, 0]
    signs = np.array(list(itertools.product([-1, 1], repeat=len(d))))
    exact = np.mean(np.abs((signs * d).mean(1)) >= abs(d.mean()) * (1 - 1e-12))
    for seed in (1, 2):
        rows = json.loads(attnscan("compare", a, b, "--format", "json", "--resamples", "20000", "--seed", str(seed),
                                   "--top", "0", "--stop-above", "0").stdout)["heads"]
        row = next(r for r in rows if (r["layer"], r["head"]) == (0, 0))
        sigma = np.sqrt(exact * (1 - exact) / 20000)
        assert abs(row["p_permutation"] - exact) < 5 * sigma + 1e-4, (row["p_permutation"], exact)
    print(f"sign-flip permutation p {row['p_permutation']:.4f} vs exact {exact:.4f} over all 2^{len(d)} flips")


def check_sequential_stopping(path, got, table):
    """By default each head's permutations stop once its p is certain to exceed 0.05 (Besag-Clifford, h = 50 of
    1000): every head that did not stop has exactly the p of all 1000 resamples (--stop-above 0), every head that
    stopped has p = 50 / resamples drawn and a full-run p above 0.05; all else is the same."""
    full = rows_by_head(json.loads(attnscan("compare", path, "--by", "label", "--top", "0", "--format", "json",
                                            "--stop-above", "0").stdout))
    stopped = 0
    for key, row in got.items():
        f = full[key]
        assert {k: v for k, v in row.items() if k not in ("p_permutation", "resamples")} == \
            {k: v for k, v in f.items() if k not in ("p_permutation", "resamples")}, key
        if row["p_permutation"] is None:
            continue
        assert f["resamples"] == 1000, f
        if row["resamples"] < 1000:
            stopped += 1
            assert f["p_permutation"] > 0.05, (row, f)
            assert close(row["p_permutation"], 50 / row["resamples"], 1e-12), row
        else:
            assert (row["p_permutation"], row["resamples"]) == (f["p_permutation"], 1000), (row, f)
    assert 0 < stopped < len(got), stopped
    assert '"~": stopped early' in table and "~" in table.split("stopped early", 1)[1], table
    print(f"sequential stopping: {stopped} of {len(got)} heads stopped, each with a full-run p above 0.05; "
          "the others identical to all 1000 resamples")


def synthetic_pair(d):
    """Two copies of a 12-pair file whose next_token scores differ by d at head 0-0 (0 elsewhere)."""
    data = out("twelve.tsv")
    rows = open(os.path.join(ROOT, "data", "sample_pairs.tsv")).read().splitlines()
    with open(data, "w") as f:
        f.write(rows[0] + "\n" + "\n".join(rows[1:] + rows[1:3]) + "\n")
    a = scores_run("syn_a.h5", data, "detectors=next_token")
    b = out("syn_b.h5")
    shutil.copy(a, b)
    with h5py.File(b, "r+") as f:
        v = f["scores/next_token/next_token/values"]
        x = v[...]
        x[:, 0, 0] -= d.astype(np.float32)
        v[...] = x
    return a, b


def test_label_groups_and_correlation_match_scipy():
    model_dir()
    need_scipy()
    rng = np.random.default_rng(3)
    labels = rng.choice(["yes", "no", "maybe"], size=200, p=[0.5, 0.4, 0.1])
    f = scores_run("labelled.h5", pairs_file(labels), "dataset.label=label")
    report = json.loads(attnscan("compare", f, "--by", "label", "--top", "0", "--format", "json").stdout)
    assert (report["a"], report["b"]) == ("yes", "no"), report["a"]  # the two largest, later label first
    # Heads are tested on every core; each test draws from its own seed, so one thread gives the same.
    alone = json.loads(attnscan("compare", f, "--by", "label", "--top", "0", "--format", "json", "--threads", "1").stdout)
    assert alone == report
    table = attnscan("compare", f, "--by", "label", "--top", "0").stdout
    assert "0.00e+00" not in table and "<1.0e-03" in table, table  # p at its resolution, never 0
    got = rows_by_head(report)
    h = h5py.File(f, "r")
    lab = h["examples/label"].asstr()[...]
    checked = 0
    for key in h["scores"].attrs["outputs"]:
        det, output = key.split("/")
        v = h[f"scores/{key}/values"][...].astype(float)
        for layer, head in itertools.product(range(v.shape[1]), range(v.shape[2])):
            x, y = v[lab == "yes", layer, head], v[lab == "no", layer, head]
            x, y = x[~np.isnan(x)], y[~np.isnan(y)]
            row = got[(det, output, layer, head)]
            if x.std() == 0 and y.std() == 0:
                continue
            ref = stats.ttest_ind(x, y, equal_var=False)
            assert close(row["t"], ref.statistic, 1e-6) and close(row["p"], ref.pvalue, 1e-6, 1e-12), (row, ref)
            n1, n2 = len(x), len(y)
            sp = np.sqrt(((n1 - 1) * x.var(ddof=1) + (n2 - 1) * y.var(ddof=1)) / (n1 + n2 - 2))
            g = (1 - 3 / (4 * (n1 + n2) - 9)) * (x.mean() - y.mean()) / sp
            assert close(row["standardized"], g, 1e-6), (row["standardized"], g)
            checked += 1
    print(f"{checked} Welch t-tests and Hedges' g equal scipy/numpy (labels yes vs no)")
    check_sequential_stopping(f, got, table)
    scores = rng.uniform(0, 5, size=200).round(2)
    g = scores_run("scored.h5", pairs_file(scores), "dataset.label=label", "dataset.label_type=number")
    report = json.loads(attnscan("compare", g, "--by", "label", "--top", "0", "--format", "json").stdout)
    assert report["kind"] == "correlation", report["kind"]
    got = rows_by_head(report)
    h = h5py.File(g, "r")
    y = h["examples/label_value"][...]
    checked = 0
    for key in h["scores"].attrs["outputs"]:
        det, output = key.split("/")
        v = h[f"scores/{key}/values"][...].astype(float)
        for layer, head in itertools.product(range(v.shape[1]), range(v.shape[2])):
            x = v[:, layer, head]
            ok = ~np.isnan(x)
            ref = stats.spearmanr(x[ok], y[ok])
            row = got[(det, output, layer, head)]
            assert close(row["effect"], ref.correlation, 1e-9) and close(row["p"], ref.pvalue, 1e-6, 1e-12), (row, ref)
            z, se = np.arctanh(ref.correlation), 1 / np.sqrt(ok.sum() - 3)
            assert close(row["ci_low"], np.tanh(z - 1.959963984540054 * se), 1e-9), row
            checked += 1
    print(f"{checked} Spearman correlations with Fisher CIs equal scipy/numpy (a continuous label)")


def test_planted_effects_are_found_exactly():
    model_dir()
    a = scores_run("base.h5", pairs_file())
    b = out("planted.h5")
    shutil.copy(a, b)
    rng = np.random.default_rng(1)  # fixed: with noise on every head, BH may rightly admit a false discovery for some draws
    planted = [(1, 2), (3, 4), (5, 6)]
    with h5py.File(b, "r+") as f:
        v = f["scores/next_token/next_token/values"]
        x = v[...]
        x += rng.normal(0, 0.01, size=x.shape).astype(np.float32)
        for layer, head in planted:
            x[:, layer, head] += 0.02
        v[...] = x
    report = json.loads(attnscan("compare", b, a, "--q", "0.05", "--top", "0", "--format", "json").stdout)
    found = sorted((h["layer"], h["head"]) for h in report["heads"] if h["detector"] == "next_token")
    assert found == planted, found
    assert all(h["detector"] == "next_token" for h in report["heads"]), report["heads"][:3]
    same = json.loads(attnscan("compare", a, a, "--q", "0.05", "--top", "0", "--format", "json").stdout)
    assert same["heads"] == [], same["heads"][:3]
    print(f"planted: {found} found at q < 0.05 out of {report['tests']} tests; identical files: none")


def test_bootstrap_intervals_within_monte_carlo_error():
    model_dir()
    f = scores_run("boot.h5", pairs_file())
    top = json.loads(attnscan("heads", f, "--detector", "next_token", "--top", "3", "--ci", "bootstrap",
                              "--resamples", "4000", "--seed", "5", "--format", "json").stdout)
    assert top["ci_method"] == "percentile bootstrap over examples, 4000 resamples, seed 5", top["ci_method"]
    again = json.loads(attnscan("heads", f, "--detector", "next_token", "--top", "3", "--ci", "bootstrap",
                                "--resamples", "4000", "--seed", "5", "--format", "json").stdout)
    assert again == top, "the same seed must give the same intervals"
    h = h5py.File(f, "r")
    rng = np.random.default_rng(0)
    for row in top["heads"]:
        x = h["scores/next_token/next_token/values"][:, row["layer"], row["head"]].astype(float)
        x = x[~np.isnan(x)]
        means = x[rng.integers(0, len(x), size=(20000, len(x)))].mean(1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        se = x.std(ddof=1) / np.sqrt(len(x))
        assert abs(row["ci_low"] - lo) < 0.1 * se and abs(row["ci_high"] - hi) < 0.1 * se, (row, lo, hi, se)
    print("bootstrap intervals within 0.1 standard errors of numpy's percentile bootstrap (20000 draws)")


def test_bad_input_is_refused():
    model_dir()
    a = scores_run("a.h5", pairs_file())
    other = out("other.tsv")
    shutil.copy(os.path.join(ROOT, "data", "sample_pairs.tsv"), other)
    b = scores_run("b.h5", other)
    for args, message in (((a, b), "come from different datasets"),
                          ((a, a, "--resamples", "50"), "--resamples 50: use at least 100"),
                          ((a, a, "--stop-above", "1"), "--stop-above 1.000000: expected 0 (never stop) up to below 1"),
                          ((a, "--by", "label"), "the file has no labels")):
        p = attnscan("compare", *args, check=False)
        assert p.returncode != 0 and message in p.stderr, (args, p.stderr)
    one = scores_run("one.h5", pairs_file(["same"] * 200), "dataset.label=label")
    p = attnscan("compare", one, "--by", "label", check=False)
    assert p.returncode != 0 and "the label has 1 group(s); a comparison needs two" in p.stderr, p.stderr
    few = scores_run("few.h5", pairs_file(["x"] * 199 + ["y"]), "dataset.label=label")
    row = json.loads(attnscan("compare", few, "--by", "label", "--top", "1", "--format", "json").stdout)["heads"][0]
    assert row["p"] is None and "fewer than 2 examples" in row["why_nan"], row


def js_matrix(f):
    """Mean JS divergence (natural log) between heads over all query tokens, from the stored attention."""
    L, H = len(f["attention"].attrs["layers"]), len(f["attention"].attrs["heads"])
    k = L * H
    total, queries = np.zeros((k, k)), 0
    for i in range(len(f["examples/index"])):
        o = int(f["examples/attention_offset"][i])
        if o < 0:
            continue
        n = int(f["examples/n_tokens"][i])
        a = f["attention/values"][o:o + k * n * n].astype(np.float64).reshape(k, n, n)
        xlogx = lambda x: np.where(x > 0, x * np.log(np.where(x > 0, x, 1)), 0.0)  # noqa: E731
        ent = xlogx(a).sum(-1)  # [k, n]
        for p_ in range(k):
            m = (a[p_][None] + a) / 2
            total[p_] += (0.5 * (ent[p_][None] + ent) - xlogx(m).sum(-1)).sum(-1)
        queries += n
    return total / queries


def classical_mds(d, dims=2):
    n = len(d)
    j = np.eye(n) - np.ones((n, n)) / n
    b = -0.5 * j @ (d ** 2) @ j
    values, vectors = np.linalg.eigh(b)
    top = np.argsort(values)[::-1][:dims]
    return vectors[:, top] * np.sqrt(np.maximum(values[top], 0))


def pairwise(x):
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))


def test_similarity_matches_numpy():
    model_dir()
    f = out("sim.h5")
    attnscan("run", "-c", "configs/default.yaml", "--set", "output.layers=1,3", "-o", f, "--no-progress")
    csv = attnscan("similarity", f, "--format", "csv").stdout.splitlines()
    got = np.array([[float(x) for x in line.split(",")[1:]] for line in csv[1:]])
    with h5py.File(f, "r") as h:
        ref = js_matrix(h)
        g = h["analysis/head_similarity"]
        stored, mds = g["js_divergence"][...], g["mds"][...]
        assert g.attrs["examples"] == 10 and list(g["layer"][:3]) == [1, 1, 1], dict(g.attrs)
    assert got.shape == (24, 24) and csv[0].startswith("head,1-0,1-1"), csv[0][:40]
    assert np.abs(got - ref).max() <= 1e-7 * np.abs(ref).max() + 1e-12, np.abs(got - ref).max()
    assert np.allclose(stored, ref, rtol=1e-6, atol=1e-9)
    assert np.allclose(pairwise(mds), pairwise(classical_mds(ref)), rtol=1e-4, atol=1e-6)
    print(f"JS divergence of {len(ref)} heads equals numpy (max diff {np.abs(got - ref).max():.2g}); "
          "MDS distances equal numpy's classical MDS")
    plain = out("no_attention.h5")
    attnscan("run", "-c", "configs/default.yaml", "--set", "output.attention_every=0", "-o", plain, "--no-progress")
    p = attnscan("similarity", plain, check=False)
    assert p.returncode != 0 and "needs attention" in p.stderr, p.stderr


def test_one_detector_two_parameter_sets():
    model_dir()
    data = out("stems.tsv")  # words that match only by their stem
    with open(data, "w") as f:
        f.write("sentence1\tsentence2\nShe plays and played games.\tPlaying is fun.\n"
                "The runner runs.\tWe walked while walking home.\nJumps and jumping.\tNothing here.\n")
    cfg = out("alias.yaml")
    with open(cfg, "w") as f:
        f.write(f"dataset:\n  path: {data}\ndetectors:\n  - same_sentence_match\n"
                "  - {name: same_sentence_match, match: stem, as: same_sentence_stem}\n")
    both = out("both.h5")
    attnscan("run", "-c", cfg, "-o", both, "--no-progress")
    stem_only = out("stem.h5")
    with open(out("stem.yaml"), "w") as f:
        f.write(f"dataset:\n  path: {data}\ndetectors:\n  - {{name: same_sentence_match, match: stem}}\n")
    attnscan("run", "-c", out("stem.yaml"), "-o", stem_only, "--no-progress")
    with h5py.File(both, "r") as x, h5py.File(stem_only, "r") as y:
        assert list(x["scores"].attrs["outputs"]) == ["same_sentence_match/same_sentence_match",
                                                     "same_sentence_stem/same_sentence_match"]
        assert x["scores/same_sentence_stem"].attrs["plugin"] == "same_sentence_match"
        assert x["scores/same_sentence_stem"].attrs["parameters"] == "match=stem"
        a, b = x["scores/same_sentence_stem/same_sentence_match/values"][...], y["scores/same_sentence_match/same_sentence_match/values"][...]
        assert np.array_equal(a, b, equal_nan=True)
        assert not np.array_equal(a, x["scores/same_sentence_match/same_sentence_match/values"][...], equal_nan=True)
    heads = attnscan("heads", both, "--detector", "same_sentence_stem", "--top", "1", "--format", "csv").stdout
    assert heads.splitlines()[1].startswith("same_sentence_stem,same_sentence_match,all,1,"), heads
    attnscan("compare", both, both, "--format", "json")
    attnscan("report", both, "-o", out("alias.html"))
    assert "same_sentence_stem/same_sentence_match" in open(out("alias.html")).read()
    with open(cfg, "a") as f:
        f.write("  - {name: next_token, as: same_sentence_stem}\n")
    p = attnscan("run", "-c", cfg, "-o", out("dup.h5"), check=False)
    assert p.returncode != 0 and "'same_sentence_stem' listed twice" in p.stderr, p.stderr


if __name__ == "__main__":
    sys.exit(harness_main(globals()))
