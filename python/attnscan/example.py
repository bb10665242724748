"""One stored sentence pair and the reading of examples in contiguous chunks (memory bounded by the
chunk, never by the number of examples)."""
import numpy as np

from .errors import FormatError
from .layout import integers, strings
from .maps import MapStore
from .tokens import make_tokens


class Example:
    """Example `position` of a result file: its row, sentences, label, tokens and (read when first
    used) attention [L, H, n, n] float32 over the stored layers and heads."""

    def __init__(self, store, position, fields, tokens, attention_offset, maps=None, token_offset=0):
        self._store = store
        self._maps, self._token_offset = maps, token_offset
        self.position = position            # 0-based place in the file (result.example(position))
        self.index = fields["index"]        # row index in the dataset (0-based, bad rows count)
        self.row = fields["row"]            # 1-based line where the row starts in the source file
        self.id = fields["id"]
        self.sentence_a = fields["sentence_a"]
        self.sentence_b = fields["sentence_b"]
        self.has_label = fields["has_label"]
        self.label = fields["label"] if self.has_label else None  # the label as written
        self.label_value = fields["label_value"]  # numeric label (label_type: number), else NaN
        self.truncated = fields["truncated"]
        self.tokens = tokens
        self._attention_offset = attention_offset
        self._attention = None

    @property
    def n_tokens(self):
        return len(self.tokens)

    @property
    def has_attention(self):
        return self._attention_offset >= 0

    @property
    def layers(self):
        """The model layers of attention's first axis."""
        return list(self._store.layers)

    @property
    def heads(self):
        """The model heads of attention's second axis."""
        return list(self._store.heads)

    @property
    def attention(self):
        """[L, H, n, n] float32 (stored layers x stored heads x query x key); NotStoredError when the
        example has none."""
        if self._attention is None:
            self._attention = self._store.read(self.position, self._attention_offset, self.n_tokens)
        return self._attention

    @property
    def visible(self):
        """[L, n, n] bool over the stored layers: True where query i sees key j; False marks a structural 0 (a
        decoder's upper triangle, keys outside a sliding window). All True for models whose queries see every key."""
        n = self.n_tokens
        ranges = self._store.key_ranges or [(-1, -1)] * len(self._store.layers)
        offset = np.arange(n)[None, :] - np.arange(n)[:, None]  # key - query
        return np.stack([((before < 0) | (offset >= -before)) & ((after < 0) | (offset <= after)) for before, after in ranges])

    def head(self, layer, head):
        """[n, n] attention of model layer `layer`, head `head` (model indices, not stored positions)."""
        return self.attention[self._store.layer_position(layer), self._store.head_position(head)]

    @property
    def value_norms(self):
        """[L, H, n] float32 over the model's layers and heads: ||f_h(x_j)|| of each token j (Kobayashi et
        al. 2020); NotStoredError naming output.value_norms when the run did not store them."""
        return self._maps.value_norms(self.position, self._token_offset, self.n_tokens)

    @property
    def rollout(self):
        """[L, n, n] float32: attention rollout up to each layer (Abnar & Zuidema 2020); NotStoredError
        naming output.rollout when the run did not store it."""
        return self._maps.layer_map("rollout", self.position, self.n_tokens)

    @property
    def value_zeroing(self):
        """[L, n, n] float32: value zeroing of each layer (Mohebbi et al. 2023), rows the receiving token;
        NotStoredError naming output.value_zeroing when the run did not store it."""
        return self._maps.layer_map("value_zeroing", self.position, self.n_tokens)

    @property
    def alti(self):
        """[L, n, n] float32: ALTI of each layer (Ferrando et al. 2022), rows the receiving token;
        NotStoredError naming output.alti when the run did not store it."""
        return self._maps.layer_map("alti", self.position, self.n_tokens)

    @property
    def alti_rollout(self):
        """[L, n, n] float32: ALTI rolled out up to each layer; NotStoredError naming output.alti when the
        run did not store it."""
        return self._maps.layer_map("alti_rollout", self.position, self.n_tokens)

    @property
    def sentence_b_start(self):
        """Position of B's first token (the first token of segment 1)."""
        return next((t for t, tok in enumerate(self.tokens) if tok.sentence == 1), len(self.tokens))

    def __repr__(self):
        return f"<attnscan.Example {self.position} id={self.id!r} n_tokens={self.n_tokens} label={self.label!r}>"


class ExampleReader:
    """Reads examples begin..end-1 of the file's examples/* and tokens/* columns in one pass each."""

    def __init__(self, f, path, store):
        self.f, self.path, self.store = f, path, store
        self.maps = MapStore(f, path)
        self.n = len(f["examples/index"])
        self.n_values = len(f["tokens/id"])

    def read(self, begin, end):
        """Example objects for positions begin..end-1."""
        e, t = self.f["examples"], self.f["tokens"]
        if end <= begin:
            return []
        cols = {c: integers(e[c], begin, end) for c in ("index", "row", "n_tokens", "token_offset",
                                                        "attention_offset", "has_label", "truncated")}
        for c in ("id", "sentence_a", "sentence_b", "label"):
            cols[c] = strings(e[c], begin, end)
        cols["label_value"] = np.asarray(e["label_value"][begin:end], dtype=np.float64)
        first, last = self.token_span(cols, begin)
        tok = {c: t[c][first:last] for c in ("id", "segment", "word_index", "special")}
        offsets = "char_start" in t and "char_end" in t  # format_version 4 on
        for c in ("char_start", "char_end"):
            tok[c] = np.asarray(t[c][first:last], dtype=np.int64) if offsets else None
        trees = "dep_head" in t and "dep_relation" in t  # datasets with dependency trees
        tok["dep_head"] = np.asarray(t["dep_head"][first:last], dtype=np.int64) if trees else None
        tok["dep_relation"] = strings(t["dep_relation"], first, last) if trees else None
        text, word = strings(t["text"], first, last), strings(t["word"], first, last)
        out = []
        for k in range(end - begin):
            a = int(cols["token_offset"][k]) - first
            b = a + int(cols["n_tokens"][k])
            tokens = make_tokens(text[a:b], tok["id"][a:b], tok["segment"][a:b], tok["word_index"][a:b],
                                 word[a:b], tok["special"][a:b],
                                 None if tok["char_start"] is None else tok["char_start"][a:b],
                                 None if tok["char_end"] is None else tok["char_end"][a:b],
                                 None if tok["dep_head"] is None else tok["dep_head"][a:b],
                                 None if tok["dep_relation"] is None else tok["dep_relation"][a:b])
            fields = {c: (cols[c][k].item() if hasattr(cols[c][k], "item") else cols[c][k])
                      for c in ("index", "row", "id", "sentence_a", "sentence_b", "label", "label_value")}
            fields["has_label"] = bool(cols["has_label"][k])
            fields["truncated"] = bool(cols["truncated"][k])
            out.append(Example(self.store, begin + k, fields, tokens, int(cols["attention_offset"][k]), self.maps,
                               int(cols["token_offset"][k])))
        return out

    def token_span(self, cols, begin):
        """The range of tokens/* rows the examples' tokens lie in, after checking each one's range."""
        starts, counts = cols["token_offset"], cols["n_tokens"]
        ends = starts + counts
        bad = np.nonzero((starts < 0) | (counts < 0) | (ends > self.n_values))[0]
        if len(bad):
            k = int(bad[0])
            raise FormatError(f"{self.path}: example {begin + k}'s tokens {int(starts[k])}..{int(ends[k])} lie outside "
                              f"the {self.n_values} rows of tokens/*")
        return int(starts.min()), int(ends.max())
