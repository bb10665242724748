"""Reading one example's attention block from attention/values and decoding it to float32."""
import hashlib
import os

import h5py
import numpy as np

from .errors import FormatError, NotStoredError


class AttentionStore:
    """attention/values with its attributes: the stored layers and heads (model indices), the dtype
    and, for uint8, the CF scale_factor / add_offset."""

    def __init__(self, f, path):
        g = f["attention"]
        self.path = path
        self.values = f["attention/values"]
        self.layers = [int(x) for x in g.attrs["layers"]]
        self.heads = [int(x) for x in g.attrs["heads"]]
        self.model_layers = int(g.attrs["model_layers"])
        self.model_heads = int(g.attrs["model_heads"])
        self.dtype = str(g.attrs["dtype"])
        self.compression = str(g.attrs.get("compression", "none"))
        # per stored layer (before, after): query i sees keys i - before .. i + after (-1: unbounded); the
        # attention outside is a structural 0 (a decoder's upper triangle). None: every key (encoders).
        ranges = g.attrs.get("key_ranges")
        self.key_ranges = None if ranges is None else [(int(ranges[2 * k]), int(ranges[2 * k + 1])) for k in range(len(self.layers))]
        a = self.values.attrs
        self.scale = float(a["scale_factor"]) if "scale_factor" in a else (1.0 / 255 if self.dtype == "uint8" else 1.0)
        self.offset = float(a["add_offset"]) if "add_offset" in a else 0.0
        # `attnscan merge --virtual`: attention/values maps the shards' (paths relative to this file's
        # folder); HDF5 would read a missing shard's values as zeros, so each is looked for first.
        folder = os.path.dirname(os.path.abspath(path))
        self.sources = [os.path.join(folder, _text(s)) for s in g.attrs.get("source_files", [])]
        self.identities = [_text(s) for s in g.attrs.get("source_identities", [])]
        self._sources_checked = False

    def read(self, example, offset, n):
        """Example `example`'s attention [L, H, n, n] (stored layers x stored heads x query x key) as float32."""
        if offset < 0:
            raise NotStoredError(f"{self.path}: example {example} has no stored attention (attention_offset -1: "
                                 "the run stored attention only every output.attention_every rows, or none); "
                                 "its scores are in result.scores()")
        size = len(self.layers) * len(self.heads) * n * n
        end = offset + size
        if end > self.values.shape[0]:
            raise FormatError(f"{self.path}: example {example}'s attention ends at value {end}, past the "
                              f"{self.values.shape[0]} values of attention/values")
        if self.sources and not self._sources_checked:
            for k, source in enumerate(self.sources):
                check_source(self.path, source, self.identities[k] if self.identities else None)
            self._sources_checked = True
        raw = self.values[offset:end]
        if self.dtype == "uint8":
            a = raw.astype(np.float32) * np.float32(self.scale)
            if self.offset:
                a += np.float32(self.offset)
        else:
            a = raw.astype(np.float32, copy=False)
        return a.reshape(len(self.layers), len(self.heads), n, n)

    def layer_position(self, layer):
        """Where model layer `layer` is in the stored layers, or NotStoredError naming them."""
        if layer not in self.layers:
            raise NotStoredError(f"{self.path}: layer {layer} is not stored (stored layers: "
                                 f"{index_list(self.layers)} of {self.model_layers})")
        return self.layers.index(layer)

    def head_position(self, head):
        if head not in self.heads:
            raise NotStoredError(f"{self.path}: head {head} is not stored (stored heads: "
                                 f"{index_list(self.heads)} of {self.model_heads})")
        return self.heads.index(head)

    def is_complete(self):
        return self.layers == list(range(self.model_layers)) and self.heads == list(range(self.model_heads))


def index_list(xs):
    return ",".join(str(x) for x in xs)


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


# The fields of a source identity in line order, with what each names in a message (the same line as
# pipeline/src/store/source_identity.cpp writes at merge time).
IDENTITY_FIELDS = (("shard", "its shard of the split"), ("model_sha256", "its model"),
                   ("dataset_sha256", "its dataset"), ("config_sha256", "its content configuration"),
                   ("numerics_sha256", "the numerics that computed it"),
                   ("attention_values", "its attention's length"),
                   ("attention_checksums_sha256", "its attention (the checksums of its values)"))


def source_identity(f):
    """The identity line of an open shard file: shard, run, and a digest of its attention's checksums."""
    a = f.attrs
    values = f["attention/values"].shape[0] if "attention/values" in f else 0
    if "attention/checksums" in f:
        crc = hashlib.sha256(np.asarray(f["attention/checksums"][...], dtype="<u4").tobytes()).hexdigest()
    else:
        crc = "none"
    sha = lambda text: hashlib.sha256(_text(text).encode()).hexdigest()  # noqa: E731
    fields = (f"{int(a['shard_index'])}/{int(a['shard_count'])}", _text(a["model_sha256"]),
              _text(a["dataset_sha256"]), sha(a["config_identity"]), sha(a.get("numerics", "")), str(values), crc)
    return " ".join(f"{key}={v}" for (key, _), v in zip(IDENTITY_FIELDS, fields))


def identity_difference(recorded, now):
    """'' when equal, else what differs in words (as the C++ readers say it)."""
    a = dict(x.split("=", 1) for x in recorded.split() if "=" in x)
    b = dict(x.split("=", 1) for x in now.split() if "=" in x)
    short = lambda v: v[:12] + "..." if len(v) > 16 else v  # noqa: E731
    return ", ".join(f"{words} ({short(a.get(key, '?'))} -> {short(b.get(key, '?'))})"
                     for key, words in IDENTITY_FIELDS if a.get(key, "?") != b.get(key, "?"))


def check_source(merged, source, identity):
    """A virtual merge's source file, opened before any of its values are read through the merged file
    (h5py would read a missing, truncated or unreadable source as fill values): FormatError naming it
    unless it is there, readable, and still the shard that was merged."""
    again = ("merge again from the shards as they are now (`attnscan merge --virtual`, or a plain "
             f"`attnscan merge` to copy the attention into {merged})")
    if not os.path.exists(source):
        raise FormatError(f"{merged}: its attention values are in {source}, which is missing (a virtual merge "
                          "reads its shards where they were, relative to the merged file: move them together)")
    try:
        with h5py.File(source, "r") as f:
            now = source_identity(f) if identity is not None else None
            values = f["attention/values"]
            if values.chunks is None and values.id.get_offset() is not None:  # contiguous: its bytes within the file
                end = values.id.get_offset() + values.shape[0] * values.dtype.itemsize
                if end > os.path.getsize(source):
                    raise OSError(f"truncated: attention/values ends at byte {end}, the file at "
                                  f"{os.path.getsize(source)}")
    except (OSError, KeyError, ValueError) as e:
        raise FormatError(f"{merged}: its attention values are in {source}, which cannot be read ({e}). Restore "
                          f"it, or rerun that shard and {again}") from None
    if identity is not None:
        diff = identity_difference(identity, now)
        if diff:
            raise FormatError(f"{merged}: its attention values are in {source}, which is not the shard merged into "
                              f"it: {diff}. It was rerun, replaced or changed after the merge: {again}")
