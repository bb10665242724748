"""Scores as a long pandas DataFrame or an xarray DataArray (both packages optional)."""
import numpy as np

from .optional import require


def labels(result):
    """Per-example labels for tables: label_value when the run's labels are numeric (label_type: number),
    else the label as written (None where an example has none)."""
    values = result.label_values()
    if not np.isnan(values).all():
        return values
    return np.array([x if has else None for x, has in zip(result.label_strings(), result.has_labels())], dtype=object)


def _index_subset(wanted, count, what):
    """The sorted indices `wanted` names (all of 0..count-1 when None); ValueError naming any outside."""
    if wanted is None:
        return np.arange(count)
    idx = np.unique(np.asarray(list(wanted), dtype=np.int64))
    bad = idx[(idx < 0) | (idx >= count)]
    if bad.size:
        raise ValueError(f"{what} {bad.tolist()} out of range: the model has {what} 0..{count - 1}")
    return idx


def _small_int(count):
    return np.int8 if count <= 127 else np.int16


def _label_column(result, pd):
    """Per-example labels, compact: float32 label_value for numeric labels, else a categorical of the
    labels as written (NaN where an example has none)."""
    values = result.label_values()
    if not np.isnan(values).all():
        return values.astype(np.float32)
    text = np.asarray(result.label_strings(), dtype=object)
    has = result.has_labels()
    categories = sorted(set(text[has].tolist()))
    codes = np.full(len(text), -1, dtype=np.int64)
    lookup = {c: k for k, c in enumerate(categories)}
    codes[has] = [lookup[t] for t in text[has]]
    return pd.Categorical.from_codes(codes, categories=categories)


class _FramePlan:
    """What a scores frame holds: the outputs, layers and heads asked for, and the shared columns."""

    def __init__(self, result, names, layers, heads, pd):
        self.result, self.pd = result, pd
        self.keys = [result.resolve(n) for n in names] if names is not None else list(result.outputs)
        self.layers = _index_subset(layers, result.model_layers, "layers")
        self.heads = _index_subset(heads, result.model_heads, "heads")
        self.label = _label_column(result, pd)
        detectors = sorted({k.split("/", 1)[0] for k in self.keys})
        outputs = sorted({k.split("/", 1)[1] for k in self.keys})
        self.detector_type = pd.CategoricalDtype(detectors)
        self.output_type = pd.CategoricalDtype(outputs)
        self.detector_code = {d: k for k, d in enumerate(detectors)}
        self.output_code = {o: k for k, o in enumerate(outputs)}

    def per_row(self, label, begin, end, per_example):
        """Examples [begin, end)'s labels repeated for each of their rows (codes for a categorical: no
        temporary wider than the column)."""
        if isinstance(label, self.pd.Categorical):
            codes = np.tile(np.repeat(label.codes[begin:end], per_example), len(self.keys))
            return self.pd.Categorical.from_codes(codes, dtype=label.dtype)
        return np.tile(np.repeat(label[begin:end], per_example), len(self.keys))

    def frame(self, begin, end):
        """Examples [begin, end) as one long frame, every column filled in place (no concatenation)."""
        pd, result = self.pd, self.result
        n, nl, nh = end - begin, len(self.layers), len(self.heads)
        per_output = n * nl * nh
        total = per_output * len(self.keys)
        layer_type, head_type = _small_int(result.model_layers), _small_int(result.model_heads)
        example = np.tile(np.repeat(np.arange(begin, end, dtype=np.int32), nl * nh), len(self.keys))
        layer = np.tile(np.repeat(self.layers.astype(layer_type), nh), n * len(self.keys))
        head = np.tile(self.heads.astype(head_type), n * nl * len(self.keys))
        score = np.empty(total, dtype=np.float32)
        baseline = np.empty(total, dtype=np.float32)
        detector = np.empty(total, dtype=_small_int(len(self.detector_code)))
        output = np.empty(total, dtype=_small_int(len(self.output_code)))
        for k, key in enumerate(self.keys):
            s = result.scores(key, begin, end)
            at = slice(k * per_output, (k + 1) * per_output)
            score[at] = s.values[:, self.layers][:, :, self.heads].ravel()
            baseline[at] = np.repeat(s.baseline[:, self.layers], nh, axis=1).ravel()
            name, out = key.split("/", 1)
            detector[at], output[at] = self.detector_code[name], self.output_code[out]
        label = self.per_row(self.label, begin, end, nl * nh)
        return pd.DataFrame({
            "example": example, "label": label,
            "detector": pd.Categorical.from_codes(detector, dtype=self.detector_type),
            "output": pd.Categorical.from_codes(output, dtype=self.output_type),
            "layer": layer, "head": head, "score": score, "baseline": baseline}, copy=False)  # no copy: each column a block of its own


def scores_frame(result, names=None, layers=None, heads=None):
    """Long DataFrame with one row per example x detector output x layer x head: example (int32), label
    (float32 for numeric labels, else categorical), detector and output (categorical), layer and head
    (int8, or int16 past 127), score and baseline (float32). names, layers and heads keep a subset."""
    pd = require("pandas", "Result.scores_frame()")
    return _FramePlan(result, names, layers, heads, pd).frame(0, len(result))


def iter_scores_frames(result, names=None, layers=None, heads=None, rows=10000):
    """scores_frame()'s rows in pieces of `rows` examples each (the same columns and dtypes, each piece
    ordered as scores_frame orders its rows), for frames larger than memory: each piece is read from the
    file when the loop asks for it."""
    pd = require("pandas", "Result.iter_scores_frames()")
    if rows < 1:
        raise ValueError(f"rows={rows}: each piece needs at least one example")
    plan = _FramePlan(result, names, layers, heads, pd)
    for begin in range(0, len(result), rows):
        yield plan.frame(begin, min(len(result), begin + rows))


def scores_array(result, name):
    """One output's values as an xarray DataArray (example x layer x head) with the example ids and
    labels as coordinates and the baseline as a coordinate on example x layer."""
    xr = require("xarray", "Result.scores_xarray()")
    s = result.scores(name)
    return xr.DataArray(
        s.values, dims=("example", "layer", "head"),
        coords={"example": np.arange(len(s.values)), "layer": s.layers, "head": s.heads,
                "id": ("example", result.ids()), "label": ("example", labels(result)),
                "baseline": (("example", "layer"), s.baseline)},
        name=s.key, attrs={"detector": s.detector, "output": s.output})
