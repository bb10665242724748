#!/usr/bin/env python3
"""Hugging Face's output_attentions for sentence pairs, run in the reference venv (transformers on
Debian's torch), for tests/python/reader_test.py:

  hf_attentions.py MODEL_DIR PAIRS.tsv OUT.npz

PAIRS.tsv: a header line, then sentence_a<TAB>sentence_b. OUT.npz: attention.K [L, H, n, n] float32,
ids.K, types.K for pair K (each pair alone, no padding).
"""
import sys

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer


def main(model_dir, pairs_path, out_path):
    tok = AutoTokenizer.from_pretrained(model_dir)
    try:
        model = AutoModel.from_pretrained(model_dir, attn_implementation="eager")
    except TypeError:  # transformers without the argument computes eager attention anyway
        model = AutoModel.from_pretrained(model_dir)
    model.eval()
    rows = [line.split("\t") for line in open(pairs_path, encoding="utf-8").read().splitlines()[1:]]
    arrays = {}
    with torch.inference_mode():
        for k, (a, b) in enumerate(r[:2] for r in rows):
            enc = tok(a, b, return_tensors="pt")
            out = model(**enc, output_attentions=True)
            arrays[f"attention.{k}"] = torch.stack([t[0] for t in out.attentions]).float().numpy()
            arrays[f"ids.{k}"] = enc["input_ids"][0].numpy()
            arrays[f"types.{k}"] = enc["token_type_ids"][0].numpy()
    np.savez(out_path, **arrays)


if __name__ == "__main__":
    main(*sys.argv[1:4])
