#!/usr/bin/env python3
"""Reference character offsets of tokens (dev-time tool; reference venv).

  make_offset_fixtures.py --models DIR --tokenizers DIR --datasets ../shared/datasets --out FILE.jsonl

The `offset_mapping` of Hugging Face's fast tokenizers (tokenizer.json), in code points (Python str
indices) into each sentence, for the WordPiece models under --models (all-MiniLM-L6-v2: lowercasing and
accent stripping; all-mpnet-base-v2) and the trained byte-level BPE, Unigram and WordLevel tokenizers
under --tokenizers (roberta, xlm-roberta, albert, deberta-v2, modernbert, wordlevel; train_tokenizers.py): every pair of
make_tokenizer_fixtures.py (untruncated and, every 10th and the hard pairs, truncated longest_first at a
short max_length) and every hard case as a single sentence. One JSON line per encoding:
  {"model", "dir", "source", "a", "b" (null: single), "max_length", "ids", "tokens", "offsets": [[s, e]...],
   "sequence_ids": [0 | 1 | null ...]}
Template specials (sequence id null) are recorded as HF gives them ((0, 0)); attnscan stores -1/-1.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tokenizer_fixtures import SHORT_LENGTHS  # noqa: E402
from make_subword_fixtures import texts_with_subword_cases  # noqa: E402

MODELS = ["all-MiniLM-L6-v2", "all-mpnet-base-v2"]
TOKENIZERS = ["roberta", "xlm-roberta", "albert", "deberta-v2", "modernbert", "wordlevel"]


def rows(name, d, texts, pairs):
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(d, use_fast=True)
    assert tok.is_fast, (name, type(tok))
    backend = tok._tokenizer
    backend.no_padding()
    backend.no_truncation()

    def row(src, a, b, max_length):
        if max_length:
            backend.enable_truncation(max_length, strategy="longest_first")
        enc = backend.encode(a, b) if b is not None else backend.encode(a)
        backend.no_truncation()
        return {"model": name, "dir": d, "source": src, "a": a, "b": b, "max_length": max_length or 512,
                "ids": enc.ids, "tokens": tok.convert_ids_to_tokens(enc.ids),
                "offsets": [list(o) for o in enc.offsets], "sequence_ids": enc.sequence_ids}

    for src, text in texts:
        if not src.startswith(("hard", "subword")):
            continue  # dataset sentences come in their pairs
        yield row(src, text, None, None)
    for i, (src, a, b) in enumerate(pairs):
        yield row(src, a, b, None)
        if i % 10 == 0 or src.startswith("hard"):
            yield row(src, a, b, SHORT_LENGTHS[i % len(SHORT_LENGTHS)])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", required=True)
    p.add_argument("--tokenizers", required=True)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from transformers.utils import logging
    logging.set_verbosity_error()
    texts, pairs = texts_with_subword_cases(args.datasets)
    # Absolute: the tests read the fixture from another working directory.
    dirs = [(m, os.path.abspath(os.path.join(args.models, m))) for m in MODELS] + \
           [(t, os.path.abspath(os.path.join(args.tokenizers, t))) for t in TOKENIZERS]
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        for name, d in dirs:
            if not os.path.isfile(os.path.join(d, "tokenizer.json")):
                print(f"{d}: no tokenizer.json, no offsets for {name}")
                continue
            n = 0
            for r in rows(name, d, texts, pairs):
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
                n += 1
            print(f"{args.out}: {name}: {n} rows")
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    sys.exit(main())
