"""An independent numpy implementation of docs/patterns.md, applied to a result file.

Reads tokens and fp32 attention from the file (no attnscan code) and returns, per detector output,
per-example scores [N, L, H] and baselines [N, L], to compare with what the plugins stored. A layer
that attends within a window (ModernBERT's local layers, read from the stored config.json as Hugging
Face defines them) has its baseline over the keys a query sees.
"""
import json
import math

import numpy as np

from h5_recipes import attention


def lower_ascii(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def word_keys(tokens, stem):
    stemmer = None
    if stem:
        import snowballstemmer  # Debian python3-snowballstemmer (Snowball 2.2, as libstemmer)
        stemmer = snowballstemmer.stemmer("english")
    keys = []
    for t in tokens:
        if t["special"]:
            keys.append(None)
            continue
        w = lower_ascii(t["word"])
        keys.append(stemmer.stemWord(w) if stemmer else w)
    return keys


def layer_windows(config):
    """Per layer: the largest |i - j| a query sees, or None (all keys). ModernBERT: layer l is local when
    l % global_attn_every_n_layers != 0, and sees |i - j| <= local_attention // 2."""
    every = config.get("global_attn_every_n_layers") if config.get("model_type") == "modernbert" else None
    return [config["local_attention"] // 2 if every and l % every else None for l in range(config["num_hidden_layers"])]


def visible(window, i, n):
    """The keys query i sees: a boolean [n] mask."""
    keys = np.arange(n)
    return np.ones(n, bool) if window is None else np.abs(keys - i) <= window


def target_score(A, targets, windows):
    """mean over i in Q (non-empty T(i)) of sum_{j in T(i)} A[:, :, i, j]; baseline per layer: the mean
    over Q of |T(i) seen| / |keys seen|."""
    n = A.shape[-1]
    Q = [i for i in range(n) if targets[i]]
    if not Q:
        return np.full(A.shape[:2], np.nan), np.full(A.shape[0], np.nan)
    total = np.zeros(A.shape[:2])
    for i in Q:
        total += A[:, :, i, targets[i]].sum(axis=-1)
    baseline = [np.mean([visible(w, i, n)[targets[i]].sum() / visible(w, i, n).sum() for i in Q]) for w in windows]
    return total / len(Q), np.array(baseline)


def scores(detector, output, tokens, A, params, windows=None):
    """(scores [L, H], baselines [L]) of one output on attention A [L, H, n, n]; windows as layer_windows()
    gives them (None: every layer sees all keys)."""
    n = len(tokens)
    windows = windows or [None] * A.shape[0]
    if detector in ("next_token", "prev_token"):
        step = 1 if detector == "next_token" else -1
        within = params.get("within_sentence") == "true"
        targets = []
        for i in range(n):
            j = i + step
            ok = 0 <= j < n and not (within and (tokens[i]["special"] or tokens[j]["special"]
                                                 or tokens[i]["segment"] != tokens[j]["segment"]))
            targets.append([j] if ok else [])
        return target_score(A, targets, windows)
    if detector in ("same_sentence_match", "cross_sentence_match"):
        keys = word_keys(tokens, params.get("match") == "stem")
        same = detector == "same_sentence_match"
        targets = [[] if tokens[i]["special"] else
                   [j for j in range(n) if not tokens[j]["special"]
                    and (tokens[j]["segment"] == tokens[i]["segment"]) == same and keys[j] == keys[i]]
                   for i in range(n)]
        return target_score(A, targets, windows)
    if detector == "subword_siblings":
        groups = {}
        for i, t in enumerate(tokens):
            if not t["special"]:
                groups.setdefault((t["segment"], t["word_index"]), []).append(i)
        targets = [[j for j in groups[(t["segment"], t["word_index"])] if j != i] if not t["special"] else []
                   for i, t in enumerate(tokens)]
        return target_score(A, targets, windows)
    if detector == "delimiter":
        # Template specials (no word index), not strings: the leading one ([CLS], <s>; the BERT and
        # RoBERTa templates have one) and the separators ([SEP], </s>) after it.
        template = [j for j, t in enumerate(tokens) if t["special"] and t["word_index"] == -1]
        begin = [j for j in template if j == 0]
        sep = [j for j in template if j != 0]
        cols = {"cls": begin, "sep": sep, "cls_or_sep": begin + sep}[output]
        return target_score(A, [cols] * n, windows)
    if detector == "entropy":
        A64 = A.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.where(A64 > 0, A64 * np.log(np.where(A64 > 0, A64, 1)), 0).sum(axis=-1)
        return h.mean(axis=-1), np.array([np.mean([math.log(visible(w, i, n).sum()) for i in range(n)]) for w in windows])
    raise ValueError(detector)


def example_tokens(f, i):
    t = int(f["examples/token_offset"][i])
    n = int(f["examples/n_tokens"][i])
    text = f["tokens/text"].asstr()[t:t + n]
    word = f["tokens/word"].asstr()[t:t + n]
    seg = f["tokens/segment"][t:t + n]
    wi = f["tokens/word_index"][t:t + n]
    sp = f["tokens/special"][t:t + n]
    return [{"text": text[k], "word": word[k], "segment": int(seg[k]), "word_index": int(wi[k]), "special": bool(sp[k])}
            for k in range(n)]


def compare(f, params_by_detector):
    """Max |plugin - reference| over every detector output, score and baseline."""
    worst = 0.0
    outputs = list(f["scores"].attrs["outputs"])
    windows = layer_windows(json.loads(f.attrs["model_config"]))
    for i in range(len(f["examples/index"])):
        tokens = example_tokens(f, i)
        A = attention(f, i).astype(np.float64)
        for key in outputs:
            det, out = key.split("/")
            ref, base = scores(det, out, tokens, A, params_by_detector.get(det, {}), windows)
            got = f[f"scores/{key}/values"][i].astype(np.float64)
            gb = f[f"scores/{key}/baseline"][i].astype(np.float64)
            if np.isnan(ref).any() or np.isnan(got).any():
                assert np.isnan(ref).all() and np.isnan(got).all(), (key, i, "NaN pattern differs")
                assert np.isnan(base).all() and np.isnan(gb).all(), (key, i, "baseline NaN differs")
                continue
            worst = max(worst, float(np.abs(got - ref).max()), float(np.abs(gb - base).max()))
    return worst
