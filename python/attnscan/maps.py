"""The optional per-token value norms and per-example layer maps (output.value_norms; output.rollout,
output.value_zeroing, output.alti)."""
import numpy as np

from .errors import NotStoredError


# Each layer map: its dataset and the option that stores it (the C++ side's kLayerMaps).
LAYER_MAPS = {
    "rollout": ("rollout/values", "output.rollout"),
    "value_zeroing": ("value_zeroing/values", "output.value_zeroing"),
    "alti": ("alti/values", "output.alti"),
    "alti_rollout": ("alti_rollout/values", "output.alti"),
}


class MapStore:
    """tokens/value_norm [T, L, H] and the layer maps (example i at L * sum(n_tokens[:i]**2) of each
    dataset), when stored."""

    def __init__(self, f, path):
        self.f, self.path = f, path
        self.model_layers = int(f["attention"].attrs["model_layers"])
        self._starts = None

    def value_norms(self, example, token_offset, n):
        """[L, H, n] float32: ||f_h(x_j)|| of each token j (model layers x model heads)."""
        if "tokens/value_norm" not in self.f:
            raise NotStoredError(f"{self.path}: no value norms stored (the run had output.value_norms: false); "
                                 f"rerun with --set output.value_norms=true (example {example})")
        return np.asarray(self.f["tokens/value_norm"][token_offset:token_offset + n], dtype=np.float32).transpose(1, 2, 0)

    def layer_map(self, name, example, n):
        """[L, n, n] float32: the layer map `name` (LAYER_MAPS) of each layer, rows the receiving token."""
        dataset, option = LAYER_MAPS[name]
        if dataset not in self.f:
            raise NotStoredError(f"{self.path}: no {name} stored (the run had {option}: false); "
                                 f"rerun with --set {option}=true (example {example})")
        if self._starts is None:
            counts = np.asarray(self.f["examples/n_tokens"][...], dtype=np.int64)
            self._starts = np.concatenate([[0], np.cumsum(self.model_layers * counts ** 2)])
        start = int(self._starts[example])
        size = self.model_layers * n * n
        return np.asarray(self.f[dataset][start:start + size], dtype=np.float32).reshape(self.model_layers, n, n)
