"""The h5py recipes of docs/hdf5-layout.md, as functions the tests use (Debian python3-h5py, numpy)."""
import numpy as np


def attention(f, i):
    """Example i's attention as [L, H, n, n] (stored layers x stored heads x query x key), or None."""
    n = int(f["examples/n_tokens"][i])
    o = int(f["examples/attention_offset"][i])
    if o < 0:
        return None
    L, H = len(f["attention"].attrs["layers"]), len(f["attention"].attrs["heads"])
    a = f["attention/values"][o:o + L * H * n * n].reshape(L, H, n, n)
    scale = f["attention/values"].attrs.get("scale_factor")
    return a * scale if scale is not None else a


def tokens(f, i):
    """Example i's WordPiece tokens as str."""
    t = int(f["examples/token_offset"][i])
    n = int(f["examples/n_tokens"][i])
    return list(f["tokens/text"].asstr()[t:t + n])


def all_content(f):
    """Every dataset and root attribute, for comparing two files."""
    out = {}
    def visit(name, obj):
        if hasattr(obj, "shape"):
            data = obj[...]
            out[name] = data
        for k, v in obj.attrs.items():
            out[name + "@" + k] = v
    f.visititems(visit)
    for k, v in f.attrs.items():
        out["@" + k] = v
    return out


def same_content(x, y, ignore=()):
    """List of differences between two all_content() dicts."""
    diffs = []
    for k in sorted(set(x) | set(y)):
        if k in ignore:
            continue
        if k not in x or k not in y:
            diffs.append(f"{k}: only in one file")
            continue
        a, b = np.asarray(x[k]), np.asarray(y[k])
        if a.shape != b.shape or not (a == b).all() and not (a.dtype.kind == "f" and np.array_equal(a, b, equal_nan=True)):
            diffs.append(f"{k}: differs")
    return diffs
