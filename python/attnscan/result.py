"""Result: one attnscan HDF5 file opened read-only, its provenance, examples, scores and converters."""
import numbers
import os

import numpy as np

from . import convert, frames, provenance
from .attention import AttentionStore
from .errors import AttnscanError
from .example import ExampleReader
from .layout import integers, open_file, strings
from .scores import read_aggregates, read_scores, resolve
from .similarity import GROUP as SIMILARITY_GROUP
from .similarity import read_head_similarity

CHUNK = 256  # examples read at once while iterating
ANY = object()


class Result:
    """An attnscan result file (`attnscan.open(path)`); a context manager that closes the file."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._f = open_file(self.path)
        f = self._f
        self.format_version = int(f.attrs["format_version"])
        self.tool_version = provenance.text_attr(f.attrs, "tool_version")
        self.model = provenance.model(f, self.path)
        self.dataset = provenance.dataset(f)
        self.config_text = provenance.text_attr(f.attrs, "config")
        self.config_identity = provenance.text_attr(f.attrs, "config_identity")
        self.counts = provenance.counts(f)
        self.detectors = provenance.detectors(f)
        self.outputs = provenance.output_keys(f)
        self.shard = (int(f.attrs.get("shard_index", 0)), int(f.attrs.get("shard_count", 1)))
        self.compute_platform = provenance.text_attr(f.attrs, "compute_platform")
        self.numerics = provenance.text_attr(f.attrs, "numerics").splitlines()
        self.attention_store = AttentionStore(f, self.path)
        self._reader = ExampleReader(f, self.path, self.attention_store)
        self._config = None

    # --- provenance -------------------------------------------------------------------------------
    @property
    def config(self):
        """The effective configuration as a dict (needs PyYAML; config_text is the YAML text)."""
        if self._config is None:
            self._config = provenance.config(self._file, self.path)
        return self._config

    @property
    def layers(self):
        """The model layers whose attention is stored."""
        return list(self.attention_store.layers)

    @property
    def heads(self):
        return list(self.attention_store.heads)

    @property
    def model_layers(self):
        return self.attention_store.model_layers

    @property
    def model_heads(self):
        return self.attention_store.model_heads

    @property
    def attention_dtype(self):
        return self.attention_store.dtype

    @property
    def compression(self):
        return self.attention_store.compression

    # --- examples ---------------------------------------------------------------------------------
    def __len__(self):
        return self._reader.n

    def example(self, i):
        """Example i (0-based place in the file; negative counts from the end)."""
        self._file  # noqa: B018 - a closed result says so
        n = len(self)
        if not isinstance(i, numbers.Integral) or isinstance(i, bool):
            raise TypeError(f"example index must be an integer, not {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"{self.path}: example {i} out of range (the file has {n} examples)")
        i = int(i) % n
        return self._reader.read(i, i + 1)[0]

    def __iter__(self):
        """Every example in file order, read CHUNK at a time."""
        for begin in range(0, len(self), CHUNK):
            yield from self._reader.read(begin, min(begin + CHUNK, len(self)))

    def ids(self):
        return strings(self._file["examples/id"], 0, len(self))

    def label_strings(self):
        return strings(self._file["examples/label"], 0, len(self))

    def has_labels(self):
        return integers(self._file["examples/has_label"], 0, len(self)).astype(bool)

    def label_values(self):
        return np.asarray(self._file["examples/label_value"][...], dtype=np.float64)

    def has_attention(self):
        """[N] bool: which examples have stored attention (attention_offset >= 0)."""
        return integers(self._file["examples/attention_offset"], 0, len(self)) >= 0

    def where(self, label=ANY, has_attention=None):
        """The examples with this label (a str matches the label as written, a number the numeric
        label_value, a list/tuple/set any of its members) and/or with(out) stored attention."""
        return Selection(self, np.arange(len(self))).where(label=label, has_attention=has_attention)

    def matching(self, label=ANY, has_attention=None):
        """[N] bool mask of where()'s condition."""
        keep = np.ones(len(self), dtype=bool)
        if label is not ANY:
            wanted = list(label) if isinstance(label, (list, tuple, set, frozenset)) else [label]
            texts, has, values = np.array(self.label_strings(), dtype=object), self.has_labels(), self.label_values()
            hit = np.zeros(len(self), dtype=bool)
            for w in wanted:
                if isinstance(w, str):
                    hit |= has & (texts == w)
                elif isinstance(w, numbers.Real) and not isinstance(w, bool):
                    hit |= values == float(w)
                else:
                    raise TypeError(f"where(label=...) takes str or numbers, not {type(w).__name__}")
            keep &= hit
        if has_attention is not None:
            keep &= self.has_attention() == bool(has_attention)
        return keep

    # --- scores -----------------------------------------------------------------------------------
    def resolve(self, name):
        """The "detector/output" key that `name` (a key, or a detector with one output) means."""
        return resolve(self._file, self.path, name)

    def scores(self, name, begin=0, end=None):
        """Scores of one detector output, examples [begin, end) (all by default): .values [N, L, H]
        float32, .baseline [N, L]."""
        return read_scores(self._file, self.path, name, begin, end)

    def scores_frame(self, names=None, layers=None, heads=None):
        """Long pandas DataFrame: example, label, detector, output, layer, head, score, baseline (compact
        dtypes; names, layers and heads keep a subset)."""
        return frames.scores_frame(self, names, layers, heads)

    def iter_scores_frames(self, names=None, layers=None, heads=None, rows=10000):
        """scores_frame() in pieces of `rows` examples, for frames larger than memory."""
        return frames.iter_scores_frames(self, names, layers, heads, rows)

    def scores_xarray(self, name):
        """One output as an xarray DataArray (example x layer x head)."""
        return frames.scores_array(self, name)

    def aggregates(self, name=None):
        """The stored aggregates [L, H] (mean, std, count, ci_low, ci_high, baseline_mean, ci_method) of
        one output, or of every output as {key: ...} when name is None."""
        if name is not None:
            return read_aggregates(self._file, self.path, name)
        return {k: read_aggregates(self._file, self.path, k) for k in self.outputs}

    @property
    def has_head_similarity(self):
        return SIMILARITY_GROUP in self._file

    def head_similarity(self):
        return read_head_similarity(self._file, self.path)

    # --- converters -------------------------------------------------------------------------------
    def to_hf(self, i, stored_only=False, tensors="auto"):
        return convert.to_hf(self, i, stored_only, tensors)

    def to_bertviz(self, i, stored_only=False, tensors="auto"):
        return convert.to_bertviz(self, i, stored_only, tensors)

    def to_circuitsvis(self, i, layer):
        return convert.to_circuitsvis(self, i, layer)

    # --- the file ---------------------------------------------------------------------------------
    @property
    def _file(self):
        if self._f is None:
            raise AttnscanError(f"{self.path}: the result is closed")
        return self._f

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._f is None else f"{len(self)} examples"
        return f"<attnscan.Result {self.path!r}: {state}>"


class Selection:
    """Some examples of a Result (from where()); iterates CHUNK positions of the file at a time."""

    def __init__(self, result, positions):
        self.result = result
        self.positions = np.asarray(positions, dtype=np.int64)

    def __len__(self):
        return len(self.positions)

    def example(self, k):
        return self.result.example(int(self.positions[k]))

    def __iter__(self):
        keep = np.zeros(len(self.result), dtype=bool)
        keep[self.positions] = True
        reader = self.result._reader
        for begin in range(0, len(self.result), CHUNK):
            end = min(begin + CHUNK, len(self.result))
            if keep[begin:end].any():
                yield from (e for e in reader.read(begin, end) if keep[e.position])

    def where(self, label=ANY, has_attention=None):
        mask = self.result.matching(label=label, has_attention=has_attention)
        return Selection(self.result, self.positions[mask[self.positions]])

    def scores(self, name):
        s = self.result.scores(name)
        s.values, s.baseline = s.values[self.positions], s.baseline[self.positions]
        return s

    def __repr__(self):
        return f"<attnscan.Selection {len(self)} of {len(self.result)} examples of {self.result.path!r}>"
