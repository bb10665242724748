#!/usr/bin/env python3
"""Reference token ids and character offsets of the decoder models' tokenizers (dev-time tool; reference venv).

  make_decoder_tokenizer_fixtures.py --tokenizers DIR --datasets ../shared/datasets --out FILE.jsonl

For every decoder tokenizer directory under --tokenizers (train_tokenizers.py: gpt2, llama3, qwen2, gemma, llama2,
gpt_neox, smollm2), HF `tokenizers` over its tokenizer.json (Tokenizer.from_file: what the file says, post-processor
included; train_tokenizers.py checks that transformers' AutoTokenizer gives the same ids) encodes single texts:
the first DATASET_TEXTS distinct sentences of make_tokenizer_fixtures.texts_and_pairs, every hard case of
tests/fixtures/tokenizer_hard_cases.jsonl and make_subword_fixtures.SUBWORD_CASES, and DECODER_CASES (Unicode
spaces, \\r\\n runs, digit runs, uppercase contractions, the decoders' special tokens written in text).
Sentence pairs as attnscan joins them for decoders (Tokenizer::encode_pair, PairEncoding::Joined) are single
texts a + separator + b: the first DATASET_PAIRS pairs and the hard pairs of texts_and_pairs joined by a newline,
and JOINED_CASES (text at the boundary: spaces, newlines, digits, emoji, specials; other separators).
One JSON line per encoding:
  {"model", "dir", "source", "text", "ids", "tokens", "offsets": [[s, e]...], "special": [0|1...]}
and, for a joined pair, "a", "b" and "separator" (text == a + separator + b).
offsets: code points (Python str indices) into the text; "special": the post-processor's tokens (HF's
special_tokens_mask for the template; a special token written in the text is 0 there too).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_subword_fixtures import texts_with_subword_cases  # noqa: E402

TOKENIZERS = ["gpt2", "llama3", "qwen2", "gemma", "llama2", "gpt_neox", "smollm2"]
DATASET_TEXTS = 400
DECODER_CASES = [
    "", " ", "  ", "\n", "\r\n", " leading", "trailing ", "  two leading and two trailing  ",
    "HE'S here, SHE'LL go, WE'VE seen, I'M in, THEY'D do, IT'S 'S 'T 'Re 'vE",
    "12345 1234567 3.14159 10,000,000 x12y 0 00 000 0000",
    "line one\r\nline two\n\nline three\r\r\n\n  indented\n\t\ttabbed\t end",
    "nbsp\u00a0thin\u2009ideographic\u3000nel\u0085mongolian\u180ezwsp\u200bline\u2028para\u2029end",
    "  \u00a0 \u3000  mixed   spaces\u00a0\u00a0 ",
    "<|endoftext|>", "before<|endoftext|>after", "one <|endoftext|> two <|endoftext|><|endoftext|>",
    "<|begin_of_text|>hi<|end_of_text|> <|eot_id|>", "<bos>x<eos> <pad> <unk> <s> </s>",
    "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n", "<|padding|> pad",
    "北京是中国的首都。東京タワー 한국어 문장", "emoji 🙂👍🏽 👩‍👩‍👧 🇫🇷 flags",
    "e\u0301 o\u0308 A\u030a combining, Å Ω ﬁ ①", "ǅ İstanbul ΣΑΣ Straße ß ẞ",
    "\u0663\u0664 Arabic digits, \u0968 Devanagari, Ⅻ ½ ²", "don't won't y'all rock'n'roll '' '",
    "x!!!y ... ??? --- ___ *** ### $$$", "    code    indented\n        more", "a\tb\u000bc\u000cd",
    "http://example.com/a_b?c=d&e=f #tag @user", "CamelCase snake_case kebab-case UPPER lower",
]
DATASET_PAIRS = 60
# (a, b, separator): where tokens may reach across the boundary or the separator merges with the text.
JOINED_CASES = [
    ("trailing space ", " leading space", "\n"), ("ends with a newline\n", "next", "\n"), ("x", "\n\nstarts with two", "\n"),
    ("digits 12", "34 more", "\n"), ("emoji \U0001F642", "\U0001F44D\U0001F3FD thumbs", "\n"), ("北京是首都", "東京タワー", "\n"),
    ("special <|endoftext|>", "<|endoftext|> again", "\n"), ("HE'S", "'S here", "\n"), ("end.", ".start", "\n"),
    ("The cat sat.", "A cat was sitting.", " "), ("The cat sat.", "A cat was sitting.", ""),
    ("strawberry", "berries", ""), ("The cat sat.", "A cat was sitting.", " ||| "),
    ("The cat sat.", "A cat was sitting.", "\n\n"), ("The cat sat.", "A cat was sitting.", "<|endoftext|>"),
    ("The cat sat.", "A cat was sitting.", "\r\n"),
]


def rows(name, d, texts, joined):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()

    def row(src, text):
        enc = tok.encode(text)
        return {"model": name, "dir": d, "source": src, "text": text, "ids": enc.ids, "tokens": enc.tokens,
                "offsets": [list(o) for o in enc.offsets], "special": enc.special_tokens_mask}
    for src, text in texts:
        yield row(src, text)
    for src, a, b, separator in joined:
        yield {**row(src, a + separator + b), "a": a, "b": b, "separator": separator}


def joined_pairs(pairs):
    """(source, a, b, separator) of every pair the fixture joins."""
    dataset = [p for p in pairs if not p[0].startswith("hard")][:DATASET_PAIRS]
    hard = [p for p in pairs if p[0].startswith("hard")]
    out = [(f"pair:{src}", a, b, "\n") for src, a, b in dataset + hard]
    return out + [(f"pair:joined:{i}", a, b, sep) for i, (a, b, sep) in enumerate(JOINED_CASES)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokenizers", required=True)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    all_texts, pairs = texts_with_subword_cases(args.datasets)
    texts = [t for t in all_texts if not t[0].startswith(("hard", "subword"))][:DATASET_TEXTS]
    texts += [t for t in all_texts if t[0].startswith(("hard", "subword"))]
    seen = {t for _, t in texts}
    texts += [(f"decoder:{i}", t) for i, t in enumerate(DECODER_CASES) if t not in seen]
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        for name in TOKENIZERS:
            # Absolute: the tests read the fixture from another working directory.
            d = os.path.abspath(os.path.join(args.tokenizers, name))
            if not os.path.isfile(os.path.join(d, "tokenizer.json")):
                print(f"{d}: no tokenizer.json, no reference for {name}")
                continue
            n = 0
            for r in rows(name, d, texts, joined_pairs(pairs)):
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
                n += 1
            print(f"{args.out}: {name}: {n} rows")
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    sys.exit(main())
