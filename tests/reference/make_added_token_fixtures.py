#!/usr/bin/env python3
"""Reference token ids for added tokens with single_word, lstrip and rstrip (dev-time tool; reference venv).

  make_added_token_fixtures.py --models DIR --tokenizers DIR --out DIR

HF's two libraries mean different things by single_word: transformers' slow tokenizers join the token
to a neighbour that does not end (or start) with a space, tokenizers drops a match beside a word
character. For all-MiniLM-L6-v2 (--models) and the trained roberta, xlm-roberta and albert tokenizers
(--tokenizers, train_tokenizers.py), the fast tokenizer gets ADDED and is saved (tokenizer.json and the
slow files, with config.json where there is one) to OUT/NAME; then the slow and the fast tokenizer loaded from there encode TEXTS. Rows of
OUT/rows.jsonl: {"model": NAME, "tokenizer": "slow"|"fast", "text", "ids", "tokens"}.
"""
import argparse
import json
import os
import shutil
import sys

SOURCES = [("all-MiniLM-L6-v2", "models"), ("roberta", "tokenizers"), ("xlm-roberta", "tokenizers"),
           ("albert", "tokenizers")]
TEXTS = [
    "the cat sat", "concatenate cats", "cat", "a cat. cat, (cat) cat's", "cat-cat cat_cat", "  cat  ",
    "xcat catx", "Cat CAT", "café cat\u0301 cat\u00e9", "猫cat猫 ①cat", "cat\tcat\ncat", "<tag>x", "a <tag> b",
    "a<tag>b", "<tag><tag> cat<tag>", "x  <tag>  y cat <tag>cat", "one cat, two cats and a catalogue",
]


def added_tokens():
    from tokenizers import AddedToken
    return [AddedToken("cat", single_word=True), AddedToken("<tag>", single_word=True, lstrip=True, rstrip=True)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", required=True)
    p.add_argument("--tokenizers", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from transformers import AutoTokenizer
    from transformers.utils import logging
    logging.set_verbosity_error()
    partial = args.out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    counts = {}
    with open(os.path.join(partial, "rows.jsonl"), "w", encoding="utf-8") as out:
        for name, root in SOURCES:
            src = os.path.join(args.models if root == "models" else args.tokenizers, name)
            if not os.path.isdir(src):
                print(f"{src}: absent, no added-token reference for {name}")
                continue
            d = os.path.join(partial, name)
            fast = AutoTokenizer.from_pretrained(src, use_fast=True)
            fast.add_tokens(added_tokens())
            fast.save_pretrained(d)
            if os.path.exists(os.path.join(src, "config.json")):  # the family, for attnscan
                shutil.copy(os.path.join(src, "config.json"), d)
            for kind in ("slow", "fast"):
                tok = AutoTokenizer.from_pretrained(d, use_fast=(kind == "fast"))
                assert tok.is_fast == (kind == "fast"), (name, kind)
                for text in TEXTS:
                    ids = tok(text, add_special_tokens=False)["input_ids"]
                    row = {"model": name, "tokenizer": kind, "text": text, "ids": ids,
                           "tokens": tok.convert_ids_to_tokens(ids)}
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                counts[f"{name} {kind} ({type(tok).__name__})"] = len(TEXTS)
    shutil.rmtree(args.out, ignore_errors=True)
    os.replace(partial, args.out)
    for k, n in counts.items():
        print(f"{args.out}: {k}: {n} rows")


if __name__ == "__main__":
    sys.exit(main())
