#!/usr/bin/env python3
"""Reference attention of a random ModernBERT (dev-time; transformers >= 4.48 on PyPI torch: scripts/setup.sh runs it
in the peer venv of scripts/make_peer_venv.sh, transformers 5.25.0 on torch 2.15.0, which computes the same
attention as transformers 4.48.3 on torch 2.5.1 on the same model directory: max |difference| 0 over its 15 pairs).

  make_modernbert_fixtures.py --tokenizers DIR --datasets DIR --out OUT

OUT/modernbert/model/: a randomly initialised ModernBertForMaskedLM (fixed seed, small shapes: 4 layers of
which 0 and 2 are global and 1 and 3 local with a 16-token window, so that pairs are longer than the window;
saved with safe_serialization=True) with the byte-level BPE tokenizer train_tokenizers.py made in
DIR/modernbert; OUT/modernbert/reference/: pairs.json + attention.safetensors as make_family_fixtures.py
writes them (the fast tokenizer's ids, eager fp32 attention of every layer: a local layer's rows are exactly 0
outside the window).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_family_fixtures import chosen_pairs, copy_tokenizer, write_reference  # noqa: E402

WINDOW = 16


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokenizers", required=True)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    import transformers as tf
    tf.utils.logging.set_verbosity_error()
    torch.manual_seed(0)
    tok_dir = os.path.join(args.tokenizers, "modernbert")
    tok = tf.AutoTokenizer.from_pretrained(tok_dir)
    cfg = tf.ModernBertConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
        max_position_embeddings=512, global_attn_every_n_layers=2, local_attention=WINDOW, global_rope_theta=160000.0,
        local_rope_theta=10000.0, initializer_range=0.3, pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id, cls_token_id=tok.cls_token_id, sep_token_id=tok.sep_token_id,
        attn_implementation="eager", reference_compile=False)
    model = tf.ModernBertForMaskedLM(cfg)
    model_dir = os.path.join(args.out, "modernbert", "model")
    model.save_pretrained(model_dir, safe_serialization=True)
    copy_tokenizer(tok_dir, model_dir, ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"])
    write_reference(model.model, tok, chosen_pairs(args.datasets, tok, True), os.path.join(args.out, "modernbert", "reference"),
                    max_length=512, fast=tok)


if __name__ == "__main__":
    sys.exit(main())
