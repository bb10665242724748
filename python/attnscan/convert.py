"""One example's attention in the shapes other tools take: BertViz's head_view / model_view, Hugging
Face's output_attentions, CircuitsVis's attention_heads."""
from .attention import index_list
from .errors import NotStoredError
from .optional import require, torch_or_none


def _check_complete(result, stored_only, what):
    store = result.attention_store
    if stored_only or store.is_complete():
        return
    raise NotStoredError(
        f"{result.path}: {what} takes every layer and head, but the file stores layers {index_list(store.layers)} of "
        f"{store.model_layers} and heads {index_list(store.heads)} of {store.model_heads}; pass stored_only=True for "
        f"the stored ones only (then layer k of the tuple is model layer layers[k])")


def _tensors(per_layer, tensors):
    """The layer arrays as torch tensors (tensors="torch", or "auto" when torch imports) or numpy."""
    if tensors not in ("auto", "torch", "numpy"):
        raise ValueError(f"tensors must be 'auto', 'torch' or 'numpy', not {tensors!r}")
    torch = None
    if tensors == "torch":
        torch = require("torch", "tensors='torch'")
    elif tensors == "auto":
        torch = torch_or_none()
    if torch is None:
        return tuple(per_layer)
    return tuple(torch.from_numpy(a) for a in per_layer)


def to_hf(result, i, stored_only=False, tensors="auto"):
    """Example i's attention as Hugging Face's `output_attentions` gives it for the pair alone: a tuple
    with one [1, H, n, n] float32 array per layer (torch tensors when torch imports)."""
    _check_complete(result, stored_only, "to_hf (Hugging Face's output_attentions)")
    return _per_layer(result.example(i).attention, tensors)


def _per_layer(attention, tensors):
    """[L, H, n, n] -> a tuple of L arrays [1, H, n, n] (the batch axis of one pair)."""
    return _tensors([attention[k][None].copy() for k in range(attention.shape[0])], tensors)


def to_bertviz(result, i, stored_only=False, tensors="auto"):
    """Keyword arguments for bertviz.head_view / model_view: attention (to_hf's tuple), tokens and
    sentence_b_start: `head_view(**result.to_bertviz(i))`."""
    e = result.example(i)
    _check_complete(result, stored_only, "to_bertviz (BertViz's attention tuple)")
    return {"attention": _per_layer(e.attention, tensors),
            "tokens": [t.text for t in e.tokens], "sentence_b_start": e.sentence_b_start}


def to_circuitsvis(result, i, layer):
    """Keyword arguments for circuitsvis.attention.attention_heads: attention [H, n, n] of model layer
    `layer` (the stored heads) and the token strings: `attention_heads(**result.to_circuitsvis(i, 2))`."""
    e = result.example(i)
    a = e.attention[result.attention_store.layer_position(layer)]
    return {"attention": a, "tokens": [t.text for t in e.tokens]}
