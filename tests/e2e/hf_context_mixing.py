#!/usr/bin/env python3
"""Value zeroing and ALTI of each pair, computed on Hugging Face's model, independently of attnscan's
code, for run_e2e.py (run in the reference venv: transformers on Debian's torch):

  hf_context_mixing.py MODEL_DIR PAIRS.tsv OUT.npz

PAIRS.tsv: sentence_a<TAB>sentence_b per line. ModernBERT (pre-norm; transformers >= 4.48, the second
reference venv) gets value zeroing only. OUT.npz, for pair K (alone, no padding): ids.K, and
[L, n, n] float64 maps, rows the receiving token i:
  vz.K    value zeroing (Mohebbi et al. 2023, section 2): each layer of HF's model run again on its
          own input (HF's hidden state) with a forward hook zeroing token j's row of the value
          projection's output; VZ[i][j] = 1 - cos(y_i, y_i^(-j)) of the layer's outputs, rows divided
          by their sums. The model in float64 (the exact values of the fp32 weights).
  alti.K  ALTI (Ferrando et al. 2022, section 3) from HF's hidden states and attention probabilities
          (float64 forward) and the layer's weights, in numpy: T_i(x_j) = LN_i(sum_h a^h_ij f^h(x_j) +
          [i = j] x_i), f^h(x_j) = (x_j W_V + b_V)[head h] W_O[head h]^T, LN_i(u) = gamma * (u -
          mean(u)) / sigma_i with sigma_i the deviation of the LayerNorm's whole input for token i; y_i
          the LayerNorm's output; c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), rows normalised.
  rollout.K  the multi-layer ALTI: R_0 = C_0, R_l = C_l R_(l-1).
  check.K    max |sum_j T_i(x_j) + LN_i(b_O) + beta - y_i| (the decomposition is exact).
"""
import inspect
import sys

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer


def parts(model, layer):
    """(layer module, value Linear, output-projection Linear, first LayerNorm) by family."""
    kind = model.config.model_type
    if kind == "mpnet":
        block = model.encoder.layer[layer]
        return block, block.attention.attn.v, block.attention.attn.o, block.attention.LayerNorm
    if kind == "distilbert":
        block = model.transformer.layer[layer]
        return block, block.attention.v_lin, block.attention.out_lin, block.sa_layer_norm
    if kind == "albert":  # layers share the weights of their group
        groups = model.config.num_hidden_groups
        block = model.encoder.albert_layer_groups[layer * groups // model.config.num_hidden_layers].albert_layers[0]
        return block, block.attention.value, block.attention.dense, block.attention.LayerNorm
    if kind == "modernbert":  # the values are the last third of Wqkv's output; pre-norm: no norm after the attention
        block = model.layers[layer]
        return block, block.attn.Wqkv, block.attn.Wo, None
    if kind == "deberta-v2":
        block = model.encoder.layer[layer]
        return block, block.attention.self.value_proj, block.attention.output.dense, block.attention.output.LayerNorm
    block = model.encoder.layer[layer]  # bert, roberta, xlm-roberta, electra
    return block, block.attention.self.value, block.attention.output.dense, block.attention.output.LayerNorm


def whole_model_layer(model, block, inputs):
    """The layer's output [1, n, hidden] from a run of the whole model on `inputs` (the hooks set on the layer's
    parts then act in that layer only; the layers below, and so its input, are unchanged): for layers whose
    call signature changes between transformers versions (ModernBERT)."""
    captured = {}
    handle = block.register_forward_hook(lambda _m, _a, o: captured.__setitem__("y", o[0] if isinstance(o, tuple) else o))
    try:
        model(**inputs)
    finally:
        handle.remove()
    return captured["y"]


def run_layer(model, block, x, inputs=None):
    """The layer's output for input x [1, n, hidden], as the encoder calls it."""
    if model.config.model_type == "mpnet":
        return block(x, position_bias=model.encoder.compute_position_bias(x))[0]
    if model.config.model_type == "modernbert":
        return whole_model_layer(model, block, inputs)
    if model.config.model_type == "deberta-v2":  # the layer returns its output alone
        mask = model.encoder.get_attention_mask(torch.ones(x.shape[:2], dtype=torch.long))
        return block(x, mask, rel_embeddings=model.encoder.get_rel_embedding())
    if model.config.model_type == "distilbert":
        return block(x, attn_mask=torch.ones(x.shape[:2], dtype=torch.long))[-1]
    return block(x)[0]


def value_zeroing(model, hidden, inputs):
    out = []
    for layer in range(model.config.num_hidden_layers):
        block, value, _, _ = parts(model, layer)
        x = hidden[layer]
        n = x.shape[1]
        y = run_layer(model, block, x, inputs)[0]
        vz = np.zeros((n, n))
        for j in range(n):
            def zero_j(_module, _inputs, output, j=j):
                output = output.clone()
                if model.config.model_type == "modernbert":
                    output[:, j, 2 * model.config.hidden_size:] = 0
                else:
                    output[:, j] = 0
                return output
            handle = value.register_forward_hook(zero_j)
            try:
                yj = run_layer(model, block, x, inputs)[0]
            finally:
                handle.remove()
            vz[:, j] = (1 - torch.nn.functional.cosine_similarity(y, yj, dim=-1)).numpy()
        out.append(vz / vz.sum(axis=-1, keepdims=True))
    return np.stack(out)


def alti(model, hidden, attentions):
    heads = model.config.num_attention_heads
    per_layer, worst = [], 0.0
    for layer in range(model.config.num_hidden_layers):
        _, value, output, norm = parts(model, layer)
        x = hidden[layer][0].numpy()
        A = attentions[layer][0].numpy()                                   # [H, n, n]
        n, d = x.shape
        v = x @ value.weight.double().numpy().T + value.bias.double().numpy()   # [n, d]
        Wo = output.weight.double().numpy()                                  # [d out, d in]
        hd = d // heads
        f = np.stack([v[:, h * hd:(h + 1) * hd] @ Wo[:, h * hd:(h + 1) * hd].T for h in range(heads)])  # [H, n(j), d]
        theta = np.einsum("hij,hjd->ijd", A, f)                              # [n(i), n(j), d]
        theta[np.arange(n), np.arange(n)] += x
        pre = theta.sum(axis=1) + output.bias.double().numpy()
        sigma = np.sqrt(pre.var(axis=-1) + norm.eps)                         # [n(i)]
        gamma, beta = norm.weight.double().numpy(), norm.bias.double().numpy()
        y = (pre - pre.mean(axis=-1, keepdims=True)) / sigma[:, None] * gamma + beta
        T = (theta - theta.mean(axis=-1, keepdims=True)) / sigma[:, None, None] * gamma
        bias = output.bias.double().numpy()
        rest = (bias - bias.mean())[None, :] / sigma[:, None] * gamma + beta
        worst = max(worst, float(np.abs(T.sum(axis=1) + rest - y).max()))
        c = np.abs(y).sum(-1)[:, None] - np.abs(y[:, None, :] - T).sum(-1)
        c = np.maximum(c, 0)
        per_layer.append(c / c.sum(axis=-1, keepdims=True))
    C = np.stack(per_layer)
    rolled = [C[0]]
    for layer in range(1, len(C)):
        rolled.append(C[layer] @ rolled[-1])
    return C, np.stack(rolled), worst


def main():
    model_dir, pairs, target = sys.argv[1:4]
    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").double().eval()
    accepted = inspect.signature(model.forward).parameters
    out = {}
    with open(pairs, encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t") for line in f]
    with torch.no_grad():
        for k, (a, b) in enumerate(lines):
            enc = tok(a, b, return_tensors="pt")
            enc = {k: v for k, v in enc.items() if k in accepted}  # DistilBERT takes no token types
            result = model(**enc, output_hidden_states=True, output_attentions=True)
            out[f"ids.{k}"] = enc["input_ids"][0].numpy()
            out[f"vz.{k}"] = value_zeroing(model, result.hidden_states, enc)
            if model.config.model_type != "modernbert":  # ALTI's decomposition is of post-LN layers
                out[f"alti.{k}"], out[f"rollout.{k}"], out[f"check.{k}"] = alti(model, result.hidden_states,
                                                                                 result.attentions)
    np.savez(target, **out)


if __name__ == "__main__":
    main()
