"""Reading one example's attention block from attention/values and decoding it to float32."""
import os

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
        a = self.values.attrs
        self.scale = float(a["scale_factor"]) if "scale_factor" in a else (1.0 / 255 if self.dtype == "uint8" else 1.0)
        self.offset = float(a["add_offset"]) if "add_offset" in a else 0.0
        # `attnscan merge --virtual`: attention/values maps the shards' (paths relative to this file's
        # folder); HDF5 would read a missing shard's values as zeros, so each is looked for first.
        folder = os.path.dirname(os.path.abspath(path))
        self.sources = [os.path.join(folder, str(s)) for s in g.attrs.get("source_files", [])]
        self._sources_found = False

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
        if self.sources and not self._sources_found:
            for source in self.sources:
                if not os.path.exists(source):
                    raise FormatError(f"{self.path}: its attention values are in {source}, which is missing (a "
                                      "virtual merge reads its shards where they were, relative to the merged "
                                      "file: move them together)")
            self._sources_found = True
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
