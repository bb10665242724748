"""The optional per-token value norms and per-example rollout (output.value_norms, output.rollout)."""
import numpy as np

from .errors import NotStoredError


class MapStore:
    """tokens/value_norm [T, L, H] and rollout/values (example i at L * sum(n_tokens[:i]**2)), when stored."""

    def __init__(self, f, path):
        self.f, self.path = f, path
        self.model_layers = int(f["attention"].attrs["model_layers"])
        self._rollout_starts = None

    def value_norms(self, example, token_offset, n):
        """[L, H, n] float32: ||f_h(x_j)|| of each token j (model layers x model heads)."""
        if "tokens/value_norm" not in self.f:
            raise NotStoredError(f"{self.path}: no value norms stored (the run had output.value_norms: false); "
                                 f"rerun with --set output.value_norms=true (example {example})")
        return np.asarray(self.f["tokens/value_norm"][token_offset:token_offset + n], dtype=np.float32).transpose(1, 2, 0)

    def rollout(self, example, n):
        """[L, n, n] float32: attention rollout up to each layer."""
        if "rollout/values" not in self.f:
            raise NotStoredError(f"{self.path}: no rollout stored (the run had output.rollout: false); "
                                 f"rerun with --set output.rollout=true (example {example})")
        if self._rollout_starts is None:
            counts = np.asarray(self.f["examples/n_tokens"][...], dtype=np.int64)
            self._rollout_starts = np.concatenate([[0], np.cumsum(self.model_layers * counts ** 2)])
        start = int(self._rollout_starts[example])
        size = self.model_layers * n * n
        return np.asarray(self.f["rollout/values"][start:start + size], dtype=np.float32).reshape(self.model_layers, n, n)
