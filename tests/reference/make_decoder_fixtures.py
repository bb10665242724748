#!/usr/bin/env python3
"""Reference attention of decoder (causal LM) families (dev-time; the peer venv of scripts/make_peer_venv.sh:
PyPI torch 2.15.0, transformers 5.25.0).

  make_decoder_fixtures.py --tokenizers DIR --datasets DIR --out OUT [--smollm2 DIR] [--only NAME...]

For each family of families(): OUT/<name>/model/ is a randomly initialised *ForCausalLM (fixed seed, small
shapes, initializer_range 0.3 so that attention is far from uniform, eager attention, max_position_embeddings
>= 512 except llama_dynamic's 64, which dynamic NTK scaling stretches), saved with save_pretrained(
safe_serialization=True) as transformers 5 writes it (config.json with rope_parameters), with the tokenizer
that train_tokenizers.py made in DIR/<tokenizer> copied in (tokenizer.json, tokenizer_config.json,
special_tokens_map.json). OUT/<name>/reference/ holds texts.json and attention.safetensors. With --smollm2 (the
directory scripts/fetch_models.sh converts), OUT/smollm2/reference/ is written for that real checkpoint.

attention.safetensors, per text i (its single text, the main input of a decoder):
  ids.i          int64 [n]               the fast tokenizer's ids (its own template: BOS where it adds one)
  attn.i         float32 [L, H, n, n]    eager attention of every layer (output_attentions=True), fp32 forward
  attn64.i       float64 [L, H, n, n]    the same forward in float64 throughout (see below)
  hidden.i       float32 [n, hidden]     the base model's last_hidden_state (after the final norm), fp32
  logits_last.i  float32 [vocab]         the LM head's logits at the last position, fp32
  lm_grad.i      float32 [L, H]          (the first GRADIENT_TEXTS texts) |dL/d gate| of each head's gate, which
                                         multiplies its attention weights before they meet the values (1 here),
                                         L the model's next-token cross-entropy (HF's loss with labels = ids)
  value_zeroing.0 float64 [L, n, n]      (VALUE_ZEROING_FAMILIES, text 0) value zeroing: 1 - cos(y_i, y_i^(-j)) of each layer's
                                         output with token j's value vectors zeroed in that layer only (its
                                         attention weights' column j set to 0), rows divided by their sum
and the first BATCH texts in one right-padded batch (pad id in texts.json, attention_mask 0 on pads; real tokens
keep positions 0..n-1):
  batch_ids      int64 [B, N]; batch_mask int64 [B, N]
  batch_attn.i   float32 [L, H, n, n]    text i's rows and columns of the batch's attention ([:n, :n])
(llama_dynamic: HF scales the whole batch by its padded length, so a short text's batch_attn differs from its
attn.i there; every other random family gives batch_attn == attn exactly.)

Float64: HF's model.double() still casts to float32 in RMSNorm, the softmax (dtype=torch.float32) and the
rotary tables, so attn64 comes from a copy built and run inside float64_everywhere(), which turns every cast to
float32 into float64 (Tensor.to/float, factories given dtype=float32, softmax's dtype); the rotary inverse
frequencies are computed in float64 at construction, the weights are the fp32 model's, widened exactly.
Dynamic NTK RoPE keeps the longest sequence's frequencies between calls in HF; each forward here starts from the
configured ones (as a freshly loaded model's first call).

texts.json: the family, model_type, the settings worth knowing (layers, heads, kv heads, head_dim,
sliding_window and which layers use it, rope_parameters, tie_word_embeddings, ...), the padding side and pad
id, each text with its token count, and the checks this script prints: for each family, the largest attention
above the diagonal (HF gives exactly 0), the largest weight a query gives a key outside the sliding window, the
farthest key (i - j) any query of a sliding layer attends with a nonzero weight (W - 1: a window of W lets query i
see keys i-W+1..i), the number of weights that underflow to exactly 0 inside the visible region, and the
largest |attn - attn64|, |batch_attn - attn| and |hidden fp32 - fp64|.
"""
import argparse
import contextlib
import copy
import json
import os
import shutil
import sys

os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' save/load progress bars

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import HAND_PAIRS, dataset_pairs  # noqa: E402

BATCH = 4
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
# hand-written hard text: digit runs, contractions, CJK, emoji, line breaks, tabs
HAND_TEXTS = [
    "I went to the store. At the store, I bought fresh strawberries.",
    "Call 555-0123 or 1234567890 before 2024-03-15; it costs $1,299.99 (3.5% off). "
    "I'm sure they'll say it isn't what we'd've done, y'all.",
    "北京是中国的首都。東京タワーは333メートルです。🚀🎉👍🏽 Café déjà vu, naïve résumé.",
    "First line.\nSecond line\n\n    indented\tafter a tab\r\nlast line",
]


def choose_texts(datasets, count):
    """HAND_TEXTS, dataset sentences, sentence pairs joined by "\\n" (A\\nB), and long texts of consecutive STS-B
    sentences (longer than the sliding windows: 40-120 tokens on the trained tokenizers)."""
    rows = dataset_pairs(datasets)
    texts = list(HAND_TEXTS)
    for k in range(3):  # single sentences spread through the datasets
        texts.append(rows[(k * 7919 + 11) % len(rows)][1])
    a, b = HAND_PAIRS[1]
    texts.append(f"{a}\n{b}")
    _, a, b = rows[(3 * 7919 + 11) % len(rows)]
    texts.append(f"{a}\n{b}")
    stsb = [a.strip() for src, a, _ in rows if src.startswith("stsb/sts-dev")]
    start = 0
    for chars in (250, 400, 300):
        parts = []
        while sum(len(p) + 1 for p in parts) < chars:
            parts.append(stsb[start])
            start += 1
        texts.append(" ".join(parts))
    order = [0, 1, 2, 3, 9, 4, 10, 5, 7, 11, 6, 8]  # hand texts first (the batch), long ones spread through
    texts = [texts[i] for i in order]
    if count < len(texts):  # SmolLM2: fewer, the long ones kept
        keep = [0, 1, 2, 3, 4, 5, 6, 8][:count]
        texts = [texts[i] for i in keep]
    return texts


def families():
    """(name, tokenizer name, model class name, config class name, config kwargs) for each random model."""
    llama = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, max_position_embeddings=512, initializer_range=0.3,
                 rms_norm_eps=1e-6)
    rope = 10000.0
    return [
        ("gpt2", "gpt2", "GPT2LMHeadModel", "GPT2Config",
         dict(n_embd=32, n_layer=2, n_head=4, n_inner=64, n_positions=512, initializer_range=0.3,
              tie_word_embeddings=True)),
        ("llama", "llama3", "LlamaForCausalLM", "LlamaConfig",
         dict(llama, tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": rope})),
        ("llama_linear", "llama3", "LlamaForCausalLM", "LlamaConfig",
         dict(llama, tie_word_embeddings=False, rope_parameters={"rope_type": "linear", "factor": 2.0,
                                                                  "rope_theta": rope})),
        # dynamic NTK only acts past max_position_embeddings: 64 here, the long texts go past it
        ("llama_dynamic", "llama3", "LlamaForCausalLM", "LlamaConfig",
         dict(llama, max_position_embeddings=64, tie_word_embeddings=True,
              rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": rope})),
        ("llama_yarn", "llama3", "LlamaForCausalLM", "LlamaConfig",
         dict(llama, tie_word_embeddings=False,
              rope_parameters={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128,
                               "beta_fast": 32.0, "beta_slow": 1.0, "rope_theta": rope})),
        # Llama 3.1's scaling: wavelengths above 64 / low_freq_factor divided by factor, below 64 / high kept,
        # smoothed between (head_dim 16: wavelengths 6.3 ... 6.3e3 cover all three bands)
        ("llama3", "llama3", "LlamaForCausalLM", "LlamaConfig",
         dict(llama, num_key_value_heads=1, tie_word_embeddings=True,
              rope_parameters={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 64, "rope_theta": 500000.0})),
        ("mistral", "llama3", "MistralForCausalLM", "MistralConfig",
         dict(llama, sliding_window=12, tie_word_embeddings=False, rope_parameters={"rope_theta": rope})),
        ("qwen2", "qwen2", "Qwen2ForCausalLM", "Qwen2Config",
         dict(llama, use_sliding_window=False, tie_word_embeddings=True, rope_parameters={"rope_theta": 1000000.0})),
        # head_dim 16 with hidden 48 and 4 heads (not 48 / 4), q/k RMSNorm per head
        ("qwen3", "qwen2", "Qwen3ForCausalLM", "Qwen3Config",
         dict(llama, hidden_size=48, head_dim=16, tie_word_embeddings=True, rope_parameters={"rope_theta": 1000000.0})),
        # layers 0 and 2 slide over 10 tokens, 1 and 3 are global (sliding_window_pattern 2); the global layers'
        # RoPE linear x8 at theta 1e6 and the local ones' theta 1e4, as Gemma 3 4B+; q scaled by 24^-0.5
        ("gemma3_text", "gemma", "Gemma3ForCausalLM", "Gemma3TextConfig",
         dict(hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
              head_dim=16, max_position_embeddings=512, initializer_range=0.3, sliding_window=10,
              sliding_window_pattern=2, query_pre_attn_scalar=24, tie_word_embeddings=True,
              rope_parameters={"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                               "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})),
        # Pythia: rotary on the first quarter of each head (head_dim 16: 4 dims), parallel residual
        ("gpt_neox", "gpt_neox", "GPTNeoXForCausalLM", "GPTNeoXConfig",
         dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              max_position_embeddings=512, initializer_range=0.3, rotary_pct=0.25, rotary_emb_base=10000,
              use_parallel_residual=True, tie_word_embeddings=False)),
        ("gpt_neox_sequential", "gpt_neox", "GPTNeoXForCausalLM", "GPTNeoXConfig",
         dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              max_position_embeddings=512, initializer_range=0.3, rotary_pct=0.25, rotary_emb_base=10000,
              use_parallel_residual=False, tie_word_embeddings=False)),
    ]


@contextlib.contextmanager
def float64_everywhere():
    """Every cast to float32 gives float64: Tensor.to / Tensor.float, the factories given dtype=float32, and
    softmax's dtype; the default dtype is float64. HF's modelling code then runs in float64 throughout."""
    import torch
    f32, f64 = torch.float32, torch.float64
    saved = {"to": torch.Tensor.to, "float": torch.Tensor.float, "softmax": torch.nn.functional.softmax}
    factories = ["arange", "tensor", "zeros", "ones", "full", "empty", "linspace"]
    saved_factories = {n: getattr(torch, n) for n in factories}

    def to(self, *args, **kwargs):
        args = tuple(f64 if a is f32 else a for a in args)
        if kwargs.get("dtype") is f32:
            kwargs["dtype"] = f64
        return saved["to"](self, *args, **kwargs)

    def wrap(fn):
        def factory(*args, **kwargs):
            if kwargs.get("dtype") is f32:
                kwargs["dtype"] = f64
            return fn(*args, **kwargs)
        return factory

    def softmax(x, dim=None, _stacklevel=3, dtype=None):
        return saved["softmax"](x, dim=dim, dtype=f64 if dtype is f32 else dtype)

    default = torch.get_default_dtype()
    torch.Tensor.to = to
    torch.Tensor.float = lambda self, *a, **k: saved["to"](self, f64)
    torch.nn.functional.softmax = softmax
    for n in factories:
        setattr(torch, n, wrap(saved_factories[n]))
    torch.set_default_dtype(f64)
    try:
        yield
    finally:
        torch.set_default_dtype(default)
        torch.Tensor.to, torch.Tensor.float = saved["to"], saved["float"]
        torch.nn.functional.softmax = saved["softmax"]
        for n, fn in saved_factories.items():
            setattr(torch, n, fn)


def reset_dynamic_rope(model):
    """HF's dynamic NTK keeps the longest sequence's frequencies between calls: back to the configured ones."""
    for m in model.modules():
        if hasattr(m, "original_inv_freq") and hasattr(m, "original_max_seq_len"):
            m.inv_freq = m.original_inv_freq.clone()
            m.max_seq_len_cached = m.original_max_seq_len


def forward(model, ids, mask):
    """(attentions [B, L, H, N, N], last hidden state [B, N, D], logits at each row's last real token [B, V])."""
    import torch
    reset_dynamic_rope(model)
    out = model.base_model(input_ids=ids, attention_mask=mask, output_attentions=True)
    att = torch.stack(list(out.attentions), dim=1)
    reset_dynamic_rope(model)
    logits = model(input_ids=ids, attention_mask=mask).logits
    last = mask.sum(1) - 1
    return att, out.last_hidden_state, logits[torch.arange(ids.shape[0]), last]


def float64_copy(model):
    import torch
    with float64_everywhere():
        m64 = type(model)(copy.deepcopy(model.config))
        m64.load_state_dict(model.state_dict())
    m64.eval()
    assert all(p.dtype == torch.float64 for p in m64.parameters())
    return m64


def sliding_layers(config):
    """{layer: window} of the layers that attend within a sliding window."""
    w = getattr(config, "sliding_window", None)
    if not w or getattr(config, "use_sliding_window", True) is False:
        return {}
    types = getattr(config, "layer_types", None)
    if types is None:
        return {layer: w for layer in range(config.num_hidden_layers)}
    return {layer: w for layer, t in enumerate(types) if t == "sliding_attention"}


def settings(config):
    keys = ["model_type", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
            "n_embd", "n_layer", "n_head", "vocab_size", "max_position_embeddings", "n_positions", "rope_parameters",
            "sliding_window", "use_sliding_window", "layer_types", "query_pre_attn_scalar", "use_parallel_residual",
            "tie_word_embeddings", "attention_bias", "final_logit_softcapping", "attn_logit_softcapping"]
    d = config.to_dict()
    out = {k: d[k] for k in keys if k in d}
    out["sliding_layers"] = {str(k): v for k, v in sliding_layers(config).items()}
    return out


def check(att, windows):
    """The figures about one text's attention [L, H, n, n]: above the diagonal, outside the windows, the farthest
    key attended in sliding layers, weights exactly 0 where the query sees the key."""
    import torch
    n = att.shape[-1]
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    above = (j > i)
    out = {"above_diagonal": att[..., above].abs().max().item() if n > 1 else 0.0,
           "outside_window": 0.0, "farthest_key": {}, "zeros_inside": 0}
    for layer in range(att.shape[0]):
        visible = ~above
        if layer in windows:
            outside = (i - j) >= windows[layer]
            if outside.any():
                out["outside_window"] = max(out["outside_window"], att[layer][..., outside].abs().max().item())
            nz = (att[layer] != 0).any(0) & ~above
            out["farthest_key"][layer] = int((i - j).expand(n, n)[nz].max().item())
            visible = visible & ~outside
        out["zeros_inside"] += int((att[layer][..., visible] == 0).sum().item())
    return out


GRADIENT_TEXTS = 4  # the random families' first texts get lm_grad; value_zeroing the first text of these:
VALUE_ZEROING_FAMILIES = ("gpt2", "gemma3_text")  # n forwards per layer each


@contextlib.contextmanager
def gated_attention(gate, columns=False):
    """Each layer's attention weights times gate[layer] ([heads], or with columns [heads, keys]) where HF's eager
    attention applies dropout to them (after the softmax, before the values): layers call it in order, once
    each per forward."""
    import torch
    original, calls = torch.nn.functional.dropout, [0]

    def dropout(x, *args, **kwargs):
        if x.dim() == 4 and x.shape[-1] == x.shape[-2] and x.shape[1] == gate.shape[1]:
            g = gate[calls[0] % gate.shape[0]]
            x = x * (g.view(1, -1, 1, g.shape[-1]) if columns else g.view(1, -1, 1, 1))
            calls[0] += 1
        return original(x, *args, **kwargs)

    torch.nn.functional.dropout = dropout
    try:
        yield calls
    finally:
        torch.nn.functional.dropout = original


def value_zeroing_reference(model, ids):
    """[L, n, n] float64: per layer l, 1 - cos(y_i, y_i^(-j)) of layer l's output with token j's value vectors
    zeroed in layer l (its weights' column j at 0: the weights meet the values right after), rows normalised."""
    import torch
    base = model.base_model
    blocks = getattr(base, "layers", None) or base.h
    layers, n = len(blocks), ids.shape[1]
    heads = getattr(model.config, "num_attention_heads", None) or model.config.n_head
    captured = {}

    def capture(layer):
        def hook(module, args, output):
            captured[layer] = (output[0] if isinstance(output, tuple) else output).detach().double()
        return hook

    handles = [b.register_forward_hook(capture(layer)) for layer, b in enumerate(blocks)]
    try:
        with torch.no_grad():
            reset_dynamic_rope(model)
            base(input_ids=ids)
            y = dict(captured)
            out = torch.zeros(layers, n, n, dtype=torch.float64)
            for layer in range(layers):
                for j in range(n):
                    gate = torch.ones(layers, heads, n, dtype=torch.float32)
                    gate[layer, :, j] = 0
                    reset_dynamic_rope(model)
                    with gated_attention(gate, columns=True):
                        base(input_ids=ids)
                    out[layer, :, j] = 1 - torch.nn.functional.cosine_similarity(y[layer][0], captured[layer][0], dim=-1)
    finally:
        for h in handles:
            h.remove()
    sums = out.sum(-1, keepdim=True)
    return torch.where(sums > 0, out / sums, torch.zeros_like(out)).contiguous()


def lm_gate_gradient(model, ids):
    """|dL/d gate| [L, H] at gate = 1, L the next-token cross-entropy of one text (HF's causal LM loss)."""
    import torch
    c = model.config
    layers = getattr(c, "num_hidden_layers", None) or c.n_layer
    heads = getattr(c, "num_attention_heads", None) or c.n_head
    gate = torch.ones(layers, heads, requires_grad=True)
    reset_dynamic_rope(model)
    with gated_attention(gate) as calls:
        model(input_ids=ids, labels=ids).loss.backward()
    assert calls[0] == layers, f"{calls[0]} gated attention calls for {layers} layers"
    return gate.grad.abs().float().contiguous()


def write_reference(model, tok, texts, out, extra=None, batch=BATCH):
    """texts.json + attention.safetensors for model (eval mode, fp32) and the fast tokenizer tok."""
    import torch
    from safetensors.torch import save_file
    model.eval()
    m64 = float64_copy(model)
    windows = sliding_layers(model.config)
    tensors, meta = {}, []
    figures = {"above_diagonal": 0.0, "outside_window": 0.0, "farthest_key": {}, "zeros_inside": 0,
               "fp32_vs_fp64": 0.0, "hidden_fp32_vs_fp64": 0.0, "batch_vs_alone": 0.0}
    with torch.inference_mode():
        for i, text in enumerate(texts):
            ids = torch.tensor([tok(text)["input_ids"]], dtype=torch.int64)
            mask = torch.ones_like(ids)
            att, hidden, logits = forward(model, ids, mask)
            with float64_everywhere():
                att64, hidden64, _ = forward(m64, ids, mask)
            assert att.dtype == torch.float32 and att64.dtype == torch.float64
            tensors[f"ids.{i}"] = ids[0].contiguous()
            tensors[f"attn.{i}"] = att[0].contiguous()
            tensors[f"attn64.{i}"] = att64[0].contiguous()
            tensors[f"hidden.{i}"] = hidden[0].float().contiguous()
            tensors[f"logits_last.{i}"] = logits[0].float().contiguous()
            c = check(att[0], windows)
            figures["above_diagonal"] = max(figures["above_diagonal"], c["above_diagonal"])
            figures["outside_window"] = max(figures["outside_window"], c["outside_window"])
            figures["zeros_inside"] += c["zeros_inside"]
            for layer, d in c["farthest_key"].items():
                figures["farthest_key"][str(layer)] = max(figures["farthest_key"].get(str(layer), -1), d)
            figures["fp32_vs_fp64"] = max(figures["fp32_vs_fp64"], (att.double() - att64).abs().max().item())
            figures["hidden_fp32_vs_fp64"] = max(figures["hidden_fp32_vs_fp64"],
                                                 (hidden.double() - hidden64).abs().max().item())
            meta.append({"text": text, "tokens": int(ids.shape[1])})
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        rows = [tensors[f"ids.{i}"].tolist() for i in range(min(batch, len(texts)))]
        width = max(len(r) for r in rows)
        ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.int64)
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], dtype=torch.int64)
        att, _, _ = forward(model, ids, mask)
        for i, r in enumerate(rows):
            n = len(r)
            tensors[f"batch_attn.{i}"] = att[i, :, :, :n, :n].contiguous()
            figures["batch_vs_alone"] = max(figures["batch_vs_alone"],
                                            (att[i, :, :, :n, :n] - tensors[f"attn.{i}"]).abs().max().item())
        tensors["batch_ids"] = ids
        tensors["batch_mask"] = mask
    family = (extra or {}).get("family")
    for i in range(min(GRADIENT_TEXTS, len(texts)) if family != "smollm2" else 0):
        tensors[f"lm_grad.{i}"] = lm_gate_gradient(model, tensors[f"ids.{i}"].clone().unsqueeze(0))  # outside inference mode
    if family in VALUE_ZEROING_FAMILIES:
        tensors["value_zeroing.0"] = value_zeroing_reference(model, tensors["ids.0"].clone().unsqueeze(0))
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "attention.safetensors"))
    doc = {**(extra or {}), "settings": settings(model.config), "padding_side": "right", "pad_token_id": pad,
           "batch": len(rows), "checks": figures, "texts": meta}
    with open(os.path.join(out, "texts.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    w = {int(k): v for k, v in figures["farthest_key"].items()}
    print(f"{out}: {len(texts)} texts, {min(m['tokens'] for m in meta)}-{max(m['tokens'] for m in meta)} tokens; "
          f"above diagonal max {figures['above_diagonal']:.3g}; outside window max {figures['outside_window']:.3g}; "
          f"sliding layers {windows or 'none'}, farthest key attended {w or '-'}; "
          f"zeros inside {figures['zeros_inside']}; |fp32 - fp64| attn {figures['fp32_vs_fp64']:.3g}, "
          f"hidden {figures['hidden_fp32_vs_fp64']:.3g}; |batch - alone| {figures['batch_vs_alone']:.3g}")
    return figures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokenizers", required=True, help="train_tokenizers.py's output (gpt2, llama3, qwen2, gemma, gpt_neox)")
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--smollm2", help="SmolLM2-135M-Instruct's directory (scripts/fetch_models.sh): its reference too")
    p.add_argument("--only", nargs="*", help="these families only (default: all, and smollm2 with --smollm2)")
    args = p.parse_args()
    import torch
    import transformers as tf
    tf.utils.logging.set_verbosity_error()
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    texts = choose_texts(args.datasets, 12)
    for name, tok_name, model_cls, cfg_cls, kwargs in families():
        if args.only and name not in args.only:
            continue
        torch.manual_seed(0)
        tok_dir = os.path.join(args.tokenizers, tok_name)
        tok = tf.AutoTokenizer.from_pretrained(tok_dir)
        assert tok.is_fast, tok_dir
        ids = {k: v for k, v in (("bos_token_id", tok.bos_token_id), ("eos_token_id", tok.eos_token_id),
                                 ("pad_token_id", tok.pad_token_id)) if v is not None}
        cfg = getattr(tf, cfg_cls)(vocab_size=len(tok), attn_implementation="eager", **ids, **kwargs)
        model = getattr(tf, model_cls)(cfg)
        model.eval()
        model_dir = os.path.join(args.out, name, "model")
        shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
        model.save_pretrained(model_dir, safe_serialization=True)
        for f in TOKENIZER_FILES:
            if os.path.exists(os.path.join(tok_dir, f)):
                shutil.copy(os.path.join(tok_dir, f), model_dir)
        # the reference runs the saved directory as it loads (tied weights included)
        loaded = getattr(tf, model_cls).from_pretrained(model_dir, attn_implementation="eager")
        tok = tf.AutoTokenizer.from_pretrained(model_dir)
        write_reference(loaded, tok, texts, os.path.join(args.out, name, "reference"),
                        extra={"family": name, "tokenizer": tok_name, "model_class": model_cls})
    if args.smollm2 and (not args.only or "smollm2" in args.only):
        model = tf.AutoModelForCausalLM.from_pretrained(args.smollm2, attn_implementation="eager", dtype=torch.float32)
        tok = tf.AutoTokenizer.from_pretrained(args.smollm2)
        write_reference(model, tok, choose_texts(args.datasets, 8), os.path.join(args.out, "smollm2", "reference"),
                        extra={"family": "smollm2", "model_dir": os.path.abspath(args.smollm2),
                               "model_class": type(model).__name__})


if __name__ == "__main__":
    sys.exit(main())
