#!/usr/bin/env python3
"""Reference token ids of the BPE, Unigram and WordLevel tokenizers (dev-time tool; reference venv).

  make_subword_fixtures.py --tokenizers DIR --datasets ../shared/datasets --out FILE.jsonl

For every trained tokenizer directory under --tokenizers (train_tokenizers.py: roberta and modernbert = byte-level BPE,
xlm-roberta, albert and deberta-v2 = SentencePiece Unigram, wordlevel = WordLevel), the slow tokenizer where there is
one (RobertaTokenizer over vocab.json + merges.txt, XLMRobertaTokenizer / AlbertTokenizer / DebertaV2Tokenizer over the
SentencePiece model; WordLevel has none) and the fast one (tokenizer.json), over the same sentences, pairs
(untruncated and at short max_length, longest_first) and hard cases as make_tokenizer_fixtures.py, plus
special-token strings of every family written in text and cases for the BPE split pattern and
SentencePiece's normalisation. Rows as make_tokenizer_fixtures.py writes them, with "model" the directory
name ("roberta", "xlm-roberta", "albert", "deberta-v2", "modernbert", "wordlevel").
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tokenizer_fixtures import texts_and_pairs, write_rows  # noqa: E402

TOKENIZERS = ["roberta", "xlm-roberta", "albert", "deberta-v2", "modernbert", "wordlevel"]
KINDS = {"wordlevel": ("fast",), "modernbert": ("fast",)}  # no slow class (PreTrainedTokenizerFast only); the others: ("slow", "fast")
SUBWORD_CASES = [
    "<s>hello</s> <s> world </s>", "x <mask> y<mask>z  <mask>", "<unk> [UNK] <pad>",
    "a [CLS] b [SEP] c [MASK] d", "[CLS]", " [SEP]", "[MASK]x", "<s>", "</s>", "<mask>",
    "it's they're we've I'm you'll he'd 'S ''s''", "9,9 and 1,000,000 or 12,5, x9, ,9 9 ,",
    "``quoted'' text and ``more''", "a  b   c    d", "  leading and trailing  ", "\ttab\tand\nnewline\r\n",
    "emoji 🙂👍🏽 and 家族 and naïve café Œuvre ﬁ ＡＢＣ ①②", "e\u0301 combining and \u00a0nbsp\u2009thin\u3000ideographic",
    "1234567890 3.14159 -42 +7 10% $5 €6", "...!!!???---___", "ÀÉÎÕÜ ñ ß İstanbul ΣΑΣ", "x\u200by\u200dz\ufeffw",
]


def texts_with_subword_cases(datasets):
    """The shared texts and pairs (make_tokenizer_fixtures.texts_and_pairs) and the SUBWORD_CASES not among them."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    texts, pairs = texts_and_pairs(datasets, repo)
    seen = {t for _, t in texts}
    for i, t in enumerate(SUBWORD_CASES):
        if t not in seen:
            seen.add(t)
            texts.append((f"subword:{i}", t))
    return texts, pairs


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokenizers", required=True)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from transformers.utils import logging
    logging.set_verbosity_error()
    texts, pairs = texts_with_subword_cases(args.datasets)
    pairs.append(("hard-pair:subword", SUBWORD_CASES[0], SUBWORD_CASES[3]))
    pairs.append(("hard-pair:subword2", SUBWORD_CASES[11], SUBWORD_CASES[16]))
    counts = {}
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        for name in TOKENIZERS:
            d = os.path.join(args.tokenizers, name)
            if not os.path.isdir(d):
                print(f"{d}: absent, no reference for {name}")
                continue
            write_rows(out, name, d, KINDS.get(name, ("slow", "fast")), texts, pairs, counts)
    os.replace(args.out + ".tmp", args.out)
    for k, n in counts.items():
        print(f"{args.out}: {k}: {n} rows")


if __name__ == "__main__":
    sys.exit(main())
