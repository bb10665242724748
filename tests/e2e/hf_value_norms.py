#!/usr/bin/env python3
"""Kobayashi et al.'s ||f_h(x_j)|| from Hugging Face's own hidden states and weights, run in the
reference venv (transformers on Debian's torch), for run_e2e.py:

  hf_value_norms.py MODEL_DIR PAIRS.tsv OUT.npz

PAIRS.tsv: sentence_a<TAB>sentence_b per line. OUT.npz: norms.K [L, H, n] float64 and ids.K for pair K
(alone, no padding), from HF's fp32 forward; exact.K the same from the model run in float64 (the exact
values of the fp32 weights, against which HF's own fp32 error is measured too). f_h(x) = (x W_V +
b_V)[head h] W_O[head h columns]^T; the output bias is left out.
"""
import sys

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer


def projections(model, layer):
    """The value and output-projection Linear modules of one layer, by family."""
    kind = model.config.model_type
    if kind == "mpnet":
        attn = model.encoder.layer[layer].attention.attn
        return attn.v, attn.o
    if kind == "distilbert":
        attn = model.transformer.layer[layer].attention
        return attn.v_lin, attn.out_lin
    block = model.encoder.layer[layer].attention  # bert, roberta, xlm-roberta, electra
    return block.self.value, block.output.dense


def value_norms(model, enc):
    """[L, H, n] float64: ||f_h(x_j)|| from the model's own hidden states (input of layer l: hidden[l])."""
    heads = model.config.num_attention_heads
    hidden = model(**enc, output_hidden_states=True).hidden_states
    norms = []
    for layer in range(model.config.num_hidden_layers):
        value, output = projections(model, layer)
        x = hidden[layer][0].double()
        v = x @ value.weight.double().T + value.bias.double()  # [n, hidden]
        d = v.shape[1] // heads
        w_o = output.weight.double()  # [hidden out, hidden in]
        f = torch.stack([v[:, h * d:(h + 1) * d] @ w_o[:, h * d:(h + 1) * d].T for h in range(heads)])
        norms.append(f.norm(dim=-1).numpy())  # [H, n]
    return np.stack(norms)


def main(model_dir, pairs_path, out_path):
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    exact = AutoModel.from_pretrained(model_dir, attn_implementation="eager").double().eval()
    arrays = {}
    with torch.inference_mode():
        for k, line in enumerate(open(pairs_path, encoding="utf-8").read().splitlines()):
            a, b = line.split("\t")[:2]
            enc = tok(a, b, return_tensors="pt")
            arrays[f"norms.{k}"] = value_norms(model, enc)
            arrays[f"exact.{k}"] = value_norms(exact, enc)
            arrays[f"ids.{k}"] = enc["input_ids"][0].numpy()
    np.savez(out_path, **arrays)


if __name__ == "__main__":
    main(*sys.argv[1:4])
