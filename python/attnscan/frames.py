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


def scores_frame(result, names=None):
    """Long DataFrame with one row per example x detector output x layer x head: example, label,
    detector, output, layer, head, score, baseline."""
    pd = require("pandas", "Result.scores_frame()")
    keys = [result.resolve(n) for n in names] if names is not None else result.outputs
    label = labels(result)
    parts = []
    for key in keys:
        s = result.scores(key)
        n, n_layers, n_heads = s.values.shape
        example, layer, head = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n_layers), np.arange(n_heads),
                                                               indexing="ij"))
        parts.append(pd.DataFrame({
            "example": example, "label": label[example],
            "detector": s.detector, "output": s.output,
            "layer": layer, "head": head, "score": s.values.ravel(), "baseline": s.baseline[example, layer]}))
    if not parts:
        return pd.DataFrame(columns=["example", "label", "detector", "output", "layer", "head", "score", "baseline"])
    return pd.concat(parts, ignore_index=True)


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
