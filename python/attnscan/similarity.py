"""analysis/head_similarity, which `attnscan similarity` adds to a finished file."""
import numpy as np

from .errors import NotStoredError
from .provenance import text_attr

GROUP = "analysis/head_similarity"


def read_head_similarity(f, path):
    """{js_divergence [K, K], mds [K, 2], layer [K], head [K], method, mds_method, examples, queries}."""
    if GROUP not in f:
        raise NotStoredError(f"{path}: no {GROUP}; compute it with `attnscan similarity {path}`")
    g = f[GROUP]
    out = {k: np.asarray(g[k][...]) for k in ("js_divergence", "mds", "layer", "head") if k in g}
    for k in ("method", "mds_method"):
        out[k] = text_attr(g.attrs, k)
    for k in ("examples", "queries"):
        if k in g.attrs:
            out[k] = int(g.attrs[k])
    return out
