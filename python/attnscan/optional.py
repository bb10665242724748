"""Optional packages, imported only when a method that needs them is called."""
import importlib

from .errors import MissingDependencyError

# import name -> (what to install with pip, Debian package)
_PACKAGES = {
    "pandas": ("pandas", "python3-pandas"),
    "xarray": ("xarray", "python3-xarray"),
    "torch": ("torch", "python3-torch"),
    "yaml": ("pyyaml", "python3-yaml"),
}


def require(name, purpose):
    """The module `name`, or MissingDependencyError saying what needs it and how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        pip_name, debian = _PACKAGES.get(name, (name, "python3-" + name))
        raise MissingDependencyError(
            f"{purpose} needs the Python package '{name}' ({e}); install it with `pip install {pip_name}` "
            f"or `apt install {debian}`") from None


def torch_or_none():
    """torch when it imports, else None (the converters then hand out numpy arrays)."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None
