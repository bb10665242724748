"""An independent numpy implementation of docs/patterns.md, applied to a result file.

Reads tokens and fp32 attention from the file (no attnscan code) and returns, per detector output,
per-example scores [N, L, H] and baselines [N, L], to compare with what the plugins stored. A layer
whose queries see only some keys (ModernBERT's local layers, a decoder's causal and sliding-window
layers, read from the stored config.json as Hugging Face defines them) counts a query only where it
sees one of its targets, and has its baseline over the keys a query sees.
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


DECODERS = ("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma3_text", "gpt_neox")


def layer_windows(config):
    """Per layer (before, after): query i sees keys i - before .. i + after, None unbounded. ModernBERT: layer l
    is local when l % global_attn_every_n_layers != 0 and sees |i - j| <= local_attention // 2; a decoder sees
    the keys up to the query, a sliding layer (layer_types, or Mistral's sliding_window) the window's W keys."""
    model_type = config.get("model_type")
    layers = config.get("num_hidden_layers", config.get("n_layer"))
    if model_type == "modernbert":
        every, half = config["global_attn_every_n_layers"], config["local_attention"] // 2
        return [(half, half) if l % every else (None, None) for l in range(layers)]
    if model_type not in DECODERS:
        return [(None, None)] * layers
    window = config.get("sliding_window")
    kinds = config.get("layer_types") or ["sliding_attention" if model_type == "mistral" and window else "full_attention"] * layers
    return [(window - 1, 0) if kind == "sliding_attention" else (None, 0) for kind in kinds]


def visible(window, i, n):
    """The keys query i sees: a boolean [n] mask."""
    before, after = window
    offset = np.arange(n) - i
    return ((before is None) | (offset >= -(before or 0))) & ((after is None) | (offset <= (after or 0)))


def target_score(A, targets, windows):
    """Per layer l: the mean over i in Q_l (queries that see one of their targets T(i) in layer l) of
    sum_{j in T(i)} A[l, :, i, j], and the baseline: the mean over Q_l of |T(i) seen| / |keys seen|. NaN where
    Q_l is empty."""
    n = A.shape[-1]
    scores, baselines = np.full(A.shape[:2], np.nan), np.full(A.shape[0], np.nan)
    for l, w in enumerate(windows):
        Q = [i for i in range(n) if targets[i] and visible(w, i, n)[targets[i]].any()]
        if not Q:
            continue
        scores[l] = np.mean([A[l, :, i, targets[i]].sum(axis=0) for i in Q], axis=0)
        baselines[l] = np.mean([visible(w, i, n)[targets[i]].sum() / visible(w, i, n).sum() for i in Q])
    return scores, baselines


def scores(detector, output, tokens, A, params, windows=None):
    """(scores [L, H], baselines [L]) of one output on attention A [L, H, n, n]; windows as layer_windows()
    gives them (None: every layer sees all keys)."""
    n = len(tokens)
    windows = windows or [(None, None)] * A.shape[0]
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
            assert (np.isnan(ref) == np.isnan(got)).all(), (key, i, "NaN pattern differs")
            assert (np.isnan(base) == np.isnan(gb)).all(), (key, i, "baseline NaN differs")
            if not np.isnan(ref).all():
                worst = max(worst, float(np.nanmax(np.abs(got - ref))), float(np.nanmax(np.abs(gb - base))))
    return worst
