"""Detector scores under scores/<detector>/<output>/: per-example values, baselines and aggregates."""
from dataclasses import dataclass, field

import numpy as np

from .errors import NotStoredError
from .provenance import output_keys, text_attr

AGGREGATES = ("mean", "std", "count", "ci_low", "ci_high", "baseline_mean")


@dataclass
class Scores:
    """One detector output: values [N, L, H] float32 (every model layer and head, NaN where undefined)
    and baseline [N, L] (the score of uniform attention over the keys a query of the layer sees: the same
    on every layer unless some attend within a window). np.asarray(scores) gives the values."""
    key: str                       # "detector/output"
    values: np.ndarray
    baseline: np.ndarray
    layers: list = field(default_factory=list)
    heads: list = field(default_factory=list)

    @property
    def detector(self):
        return self.key.split("/", 1)[0]

    @property
    def output(self):
        return self.key.split("/", 1)[1]

    def __array__(self, dtype=None):
        return self.values if dtype is None else self.values.astype(dtype)


def resolve(f, path, name):
    """The "detector/output" key that `name` means: the key itself, or a detector with one output."""
    keys = output_keys(f)
    if name in keys:
        return name
    matches = [k for k in keys if k.split("/", 1)[0] == name]
    if len(matches) == 1:
        return matches[0]
    if not keys:
        raise NotStoredError(f"{path}: no scores (the run had no detectors)")
    several = " (the detector has several outputs: name one as detector/output)" if matches else ""
    raise NotStoredError(f"{path}: no detector output {name!r}{several}; the file has: {', '.join(keys)}")


def read_scores(f, path, name, begin=0, end=None):
    key = resolve(f, path, name)
    g = f["scores/" + key]
    values = np.asarray(g["values"][begin:end], dtype=np.float32)
    baseline = np.asarray(g["baseline"][begin:end], dtype=np.float32)
    if baseline.ndim == 1:  # format_version 4 and older: one baseline per example, the same on every layer
        baseline = np.repeat(baseline[:, None], values.shape[1], axis=1)
    return Scores(key, values, baseline, list(range(values.shape[1])), list(range(values.shape[2])))


def read_aggregates(f, path, name):
    """{mean, std, count, ci_low, ci_high, baseline_mean: [L, H] float32, ci_method: str} of one output."""
    key = resolve(f, path, name)
    g = f["scores/" + key]
    out = {a: np.asarray(g[a][...], dtype=np.float32) for a in AGGREGATES if a in g}
    out["ci_method"] = text_attr(g.attrs, "ci_method")
    return out
