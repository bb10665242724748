"""The exceptions the reader raises for files and requests it cannot serve; each message names the file."""


class AttnscanError(Exception):
    """Base class of every error this package raises on purpose."""


class FormatError(AttnscanError):
    """The file is not an attnscan result this reader can read (not HDF5, not attnscan, a newer
    format_version, a missing or malformed dataset)."""


class DamagedError(FormatError):
    """A stored value does not match its checksum: the file was altered or damaged after it was written."""


class NotStoredError(AttnscanError, LookupError):
    """The file does not hold what was asked: attention of an example without it, a layer or head
    outside the stored subset, a detector output the run did not have, head similarity not computed."""


class MissingDependencyError(AttnscanError, ImportError):
    """An optional package (pandas, xarray, torch, PyYAML) that the called method needs is absent."""
