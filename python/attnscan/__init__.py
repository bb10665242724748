"""Read attnscan's HDF5 result files (docs/hdf5-layout.md, docs/python.md).

    import attnscan
    with attnscan.open("out.h5") as r:
        e = r.example(0)          # e.tokens, e.attention [L, H, n, n] float32
        s = r.scores("delimiter/sep").values   # [N, L, H]
"""
from .errors import AttnscanError, DamagedError, FormatError, MissingDependencyError, NotStoredError
from .layout import NEWEST_FORMAT_VERSION, OLDEST_FORMAT_VERSION
from .result import Result, Selection
from .scores import Scores
from .tokens import Token

__version__ = "0.1.0"
__all__ = ["open", "Result", "Selection", "Scores", "Token", "AttnscanError", "FormatError", "DamagedError", "NotStoredError",
           "MissingDependencyError", "OLDEST_FORMAT_VERSION", "NEWEST_FORMAT_VERSION"]


def open(path):  # noqa: A001 - attnscan.open mirrors h5py.File / builtins.open
    """The attnscan result at `path`, read-only (use as a context manager, or call close())."""
    return Result(path)
