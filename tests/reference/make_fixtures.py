#!/usr/bin/env python3
"""Reference fixtures from Hugging Face `transformers` (dev-time tool; the C++ tests need no Python).

  make_fixtures.py tokens    --model DIR --datasets ../shared/datasets --out FILE.jsonl
      Token ids of every sentence in the shared datasets, plus pair encodings with longest_first
      truncation, as produced by HF BertTokenizer (the Python "slow" tokenizer).
  make_fixtures.py hard      --model DIR --out tests/fixtures/tokenizer_hard_cases.jsonl
      Hand-written hard cases (CJK, accents, emoji, a 150-char word, empty text, special tokens in
      text, control characters) under three tokenizer settings. Small: committed to the repository.
  make_fixtures.py attention --model DIR --datasets ../shared/datasets --out DIR
      Attention of BertModel(output_attentions=True, eager) for pairs from every dataset, the
      longest STS-B pair, hand-written pairs and a pair truncated at 512 tokens:
      DIR/attention.safetensors (attn.{i} [L,H,n,n] fp32, ids.{i}, types.{i}) and DIR/pairs.json.
"""
import argparse
import json
import os
import sys


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8")  # strict: a decoding error is a real finding, not something to hide
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [l[:-1] if l.endswith("\r") else l for l in lines]


def dataset_pairs(root):
    """(source, a, b) for every pair in the shared datasets, read the way their README describes."""
    pairs = []
    for split in ("train", "dev", "test"):
        path = os.path.join(root, "stsb", f"sts-{split}.csv")
        for n, line in enumerate(read_lines(path), 1):
            f = line.split("\t")  # no quoting: STS-B raw has unbalanced quotes
            pairs.append((f"stsb/sts-{split}.csv:{n}", f[5], f[6]))
    for split in ("dev", "test"):
        path = os.path.join(root, "paws", f"{split}.tsv")
        for n, line in enumerate(read_lines(path)[1:], 2):
            f = line.split("\t")
            pairs.append((f"paws/{split}.tsv:{n}", f[1], f[2]))
    s1 = read_lines(os.path.join(root, "snli", "s1.dev"))
    s2 = read_lines(os.path.join(root, "snli", "s2.dev"))
    assert len(s1) == len(s2)
    for n, (a, b) in enumerate(zip(s1, s2), 1):
        pairs.append((f"snli/s1.dev:{n}", a, b))
    return pairs


def load_tokenizer(model, **kw):
    from transformers.utils import logging
    logging.set_verbosity_error()
    from transformers import BertTokenizer
    return BertTokenizer.from_pretrained(model, **kw)


def cmd_tokens(args):
    tok = load_tokenizer(args.model)
    pairs = dataset_pairs(args.datasets)
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        seen = set()
        for src, a, b in pairs:
            for side, text in (("a", a), ("b", b)):
                if text in seen:
                    continue
                seen.add(text)
                ids = tok(text, add_special_tokens=False)["input_ids"]
                out.write(json.dumps({"kind": "sentence", "source": f"{src}:{side}", "text": text, "ids": ids},
                                     ensure_ascii=False) + "\n")
        # Pair encodings with truncation: every 25th pair at a short max_length.
        for i, (src, a, b) in enumerate(pairs[::25]):
            max_length = (12, 16, 24, 33)[i % 4]
            enc = tok(a, b, truncation="longest_first", max_length=max_length)
            out.write(json.dumps({"kind": "pair", "source": src, "a": a, "b": b, "max_length": max_length,
                                  "ids": enc["input_ids"], "types": enc["token_type_ids"]},
                                 ensure_ascii=False) + "\n")
    os.replace(args.out + ".tmp", args.out)
    print(f"{args.out}: {len(seen)} sentences, {len(pairs[::25])} pairs")


HARD_CASES = [
    "",
    "   ",
    "Hello, world!",
    "北京是中国的首都。",
    "東京タワーに行きました",
    "Café déjà vu, naïve résumé — Ångström, Øresund, Łódź, Dvořák.",
    "ÉCOLE ÉLÉMENTAIRE İSTANBUL ΟΔΥΣΣΕΥΣ ΣΟΦΟΣ Σ",
    "I ❤️ strawberries 🍓🍓 and 👩‍👩‍👧 emoji",
    "a" * 150,
    "super" + "califragilistic" * 10 + " word",
    "Pneumonoultramicroscopicsilicovolcanoconiosis is long.",
    "The [CLS] token and [SEP] and [MASK] appear in text; [cls] lower; x[SEP]y.",
    "control\x12char and\x00nul and \x7f del \u200b zero-width \ufeff bom",
    "tabs\tand\nnewlines\r\nand\u00a0nbsp\u3000ideographic space\u2028line sep",
    "President\u201a\u00c4\u00f4s mojibake \u00e2\u0080\u0099 here",
    "``Quoted'' text -- with dashes ... and 3.14 and $5,000.00!",
    "e\u0301 decomposed vs \u00e9 composed; ﬁ ligature; Ⅻ numeral; ½",
    "Straße groß ß ẞ",
    "ǅ titlecase ǈ and Ⓐ circled",
    "don't won't y'all rock'n'roll",
    "Привет, мир! Здравствуйте",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "한국어 문장입니다",
    "Ｆｕｌｌｗｉｄｔｈ ＡＳＣＩＩ １２３",
    "#hashtag @mention http://example.com/a_b?c=d&e=f",
    "strawberries straw ##berries ## #",
]

SETTINGS = [
    {"name": "uncased", "do_lower_case": True, "strip_accents": None},
    {"name": "cased", "do_lower_case": False, "strip_accents": None},
    {"name": "lower_keep_accents", "do_lower_case": True, "strip_accents": False},
]


def cmd_hard(args):
    with open(args.out, "w", encoding="utf-8") as out:
        for s in SETTINGS:
            tok = load_tokenizer(args.model, do_lower_case=s["do_lower_case"], strip_accents=s["strip_accents"])
            for text in HARD_CASES:
                ids = tok(text, add_special_tokens=False)["input_ids"]
                out.write(json.dumps({"setting": s["name"], "do_lower_case": s["do_lower_case"],
                                      "strip_accents": s["strip_accents"], "text": text, "ids": ids},
                                     ensure_ascii=False) + "\n")
            enc = tok(HARD_CASES[5], HARD_CASES[7], truncation="longest_first", max_length=20)
            out.write(json.dumps({"setting": s["name"], "do_lower_case": s["do_lower_case"],
                                  "strip_accents": s["strip_accents"], "a": HARD_CASES[5], "b": HARD_CASES[7],
                                  "max_length": 20, "ids": enc["input_ids"], "types": enc["token_type_ids"]},
                                 ensure_ascii=False) + "\n")
    print(f"{args.out}: {len(SETTINGS) * (len(HARD_CASES) + 1)} cases")


HAND_PAIRS = [
    ("I went to the store.", "At the store, I bought fresh strawberries."),
    ("The cat sat on the mat.", "A dog slept on the rug."),
    ("北京是中国的首都。", "Café déjà vu, naïve résumé."),
    ("", "An empty first sentence."),
    ("Short.", "A considerably longer second sentence with several more words than the first one has."),
]


def cmd_attention(args):
    import torch
    from safetensors.torch import save_file
    from transformers import BertModel
    torch.manual_seed(0)
    tok = load_tokenizer(args.model)
    try:
        model = BertModel.from_pretrained(args.model, attn_implementation="eager")
    except TypeError:
        model = BertModel.from_pretrained(args.model)
    model.eval()
    pairs = dataset_pairs(args.datasets)
    chosen = list(HAND_PAIRS)
    by_source = {}
    for src, a, b in pairs:
        by_source.setdefault(src.split(":")[0], []).append((a, b))
    for name in sorted(by_source):  # a few pairs from every file, spread through it
        rows = by_source[name]
        for k in range(3):
            chosen.append(rows[(k * 997 + 13) % len(rows)])
    stsb = [(a, b) for src, a, b in pairs if src.startswith("stsb/")]
    longest = max(stsb, key=lambda p: len(tok(p[0], p[1])["input_ids"]))
    chosen.append(longest)
    long_a = " ".join(a for a, _ in stsb[:200])  # far over 512 WordPieces
    long_b = " ".join(b for _, b in stsb[200:260])
    chosen.append((long_a, long_b))
    tensors, meta = {}, []
    with torch.inference_mode():
        for i, (a, b) in enumerate(chosen):
            enc = tok(a, b, truncation="longest_first", max_length=512, return_tensors="pt")
            out = model(**enc, output_attentions=True)
            att = torch.stack([t[0] for t in out.attentions]).contiguous().float()
            tensors[f"attn.{i}"] = att
            tensors[f"ids.{i}"] = enc["input_ids"][0].contiguous()
            tensors[f"types.{i}"] = enc["token_type_ids"][0].contiguous()
            meta.append({"a": a, "b": b, "tokens": int(att.shape[-1])})
    os.makedirs(args.out, exist_ok=True)
    save_file(tensors, os.path.join(args.out, "attention.safetensors"))
    with open(os.path.join(args.out, "pairs.json"), "w", encoding="utf-8") as f:
        json.dump({"max_length": 512, "pairs": meta}, f, ensure_ascii=False)
    print(f"{args.out}: {len(chosen)} pairs, longest {max(m['tokens'] for m in meta)} tokens")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["tokens", "hard", "attention"])
    p.add_argument("--model", required=True)
    p.add_argument("--datasets")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.mode in ("tokens", "attention") and not args.datasets:
        p.error("--datasets is required for " + args.mode)
    {"tokens": cmd_tokens, "hard": cmd_hard, "attention": cmd_attention}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
