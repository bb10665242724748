"""What the reader knows of the file layout (docs/hdf5-layout.md): versions, required paths, and the
checked opening of a file."""
import os
import zlib

import h5py
import numpy as np

from .errors import DamagedError, FormatError

FORMAT_NAME = "attnscan"
OLDEST_FORMAT_VERSION = 1
NEWEST_FORMAT_VERSION = 7  # 2 = 1 + checksums; 3 = 2 with signed int64 counts and offsets (read alike);
# 4 = 3 + tokens/char_start, tokens/char_end (older files: Token.char_start/char_end are -1);
# 5 = 4 with scores/KEY/baseline [N, L] (older files: [N], read as the same baseline on every layer);
# 6 = 5 + NAME_crc32 beside every text column (older files: their text read unchecked);
# 7 = 6, where attention/values may be a virtual dataset over shard files (merge --virtual; h5py reads it)

EXAMPLE_COLUMNS = ("index", "row", "id", "sentence_a", "sentence_b", "label", "has_label", "label_value",
                   "n_tokens", "truncated", "token_offset", "attention_offset")
TOKEN_COLUMNS = ("id", "text", "word", "segment", "word_index", "special")
ATTENTION_ATTRIBUTES = ("layers", "heads", "model_layers", "model_heads", "dtype")
ATTENTION_DTYPES = {"float16": np.float16, "float32": np.float32, "uint8": np.uint8}


def open_file(path):
    """The h5py file at `path`, read-only, after checking that it is an attnscan result of a known
    format_version with every dataset the reader uses; FormatError naming the file otherwise."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FormatError(f"{path}: no such file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise FormatError(f"{path}: not a readable HDF5 file ({e})") from None
    try:
        check(f, path)
    except BaseException:
        f.close()
        raise
    return f


def check(f, path):
    if f.attrs.get("format") != FORMAT_NAME:
        raise FormatError(f"{path}: not an attnscan result (root attribute format is "
                          f"{f.attrs.get('format')!r}, expected {FORMAT_NAME!r}); make one with `attnscan run`")
    if "format_version" not in f.attrs:
        raise FormatError(f"{path}: no root attribute format_version")
    version = int(f.attrs["format_version"])
    if version > NEWEST_FORMAT_VERSION:
        raise FormatError(f"{path}: format_version {version} is newer than this reader knows (it reads versions "
                          f"{OLDEST_FORMAT_VERSION} to {NEWEST_FORMAT_VERSION}); upgrade the attnscan Python package "
                          "(pip install ./python from the attnscan that wrote the file)")
    if version < OLDEST_FORMAT_VERSION:
        raise FormatError(f"{path}: format_version {version} is not a version attnscan ever wrote "
                          f"(known: {OLDEST_FORMAT_VERSION} to {NEWEST_FORMAT_VERSION})")
    missing = [f"examples/{c}" for c in EXAMPLE_COLUMNS if f"examples/{c}" not in f]
    missing += [f"tokens/{c}" for c in TOKEN_COLUMNS if f"tokens/{c}" not in f]
    if "attention/values" not in f:
        missing.append("attention/values")
    if missing:
        raise FormatError(f"{path}: missing dataset(s) {', '.join(missing)}: damaged or not written by attnscan run")
    absent = [a for a in ATTENTION_ATTRIBUTES if a not in f["attention"].attrs]
    if absent:
        raise FormatError(f"{path}: the attention group lacks the attribute(s) {', '.join(absent)}")
    dtype = f["attention"].attrs["dtype"]
    if dtype not in ATTENTION_DTYPES:
        raise FormatError(f"{path}: attention dtype {dtype!r} is none of {', '.join(ATTENTION_DTYPES)}")
    if np.dtype(ATTENTION_DTYPES[dtype]) != f["attention/values"].dtype:
        raise FormatError(f"{path}: attention/values is {f['attention/values'].dtype}, "
                          f"but the attention attribute dtype says {dtype}")
    n = len(f["examples/index"])
    uneven = [c for c in EXAMPLE_COLUMNS if len(f[f"examples/{c}"]) != n]
    if uneven:
        raise FormatError(f"{path}: examples/{uneven[0]} has {len(f[f'examples/' + uneven[0]])} entries, "
                          f"examples/index {n}")
    for c in ("token_offset", "attention_offset", "n_tokens"):
        if f[f"examples/{c}"].dtype.kind not in "iu":
            raise FormatError(f"{path}: examples/{c} is {f[f'examples/{c}'].dtype}, not an integer type")


def integers(dataset, begin, end):
    """dataset[begin:end] as int64, whether stored signed or unsigned (offsets and counts become
    signed int64 in a later layout; unsigned files still read)."""
    return np.asarray(dataset[begin:end]).astype(np.int64, copy=False)


def strings(dataset, begin, end):
    """A variable-length UTF-8 string column's entries begin..end-1 as a list of str, each checked against
    its CRC-32 in NAME_crc32 where the file has it (format_version 6); DamagedError naming the row if not."""
    raw = dataset[begin:end]
    sums_name = dataset.name + "_crc32"
    if sums_name in dataset.file:
        for row, (text, expected) in enumerate(zip(raw, dataset.file[sums_name][begin:end]), begin):
            if zlib.crc32(text) != int(expected):
                raise DamagedError(f"{dataset.file.filename} is damaged: dataset {dataset.name.lstrip('/')}, row {row}: "
                                   f"its text does not match its checksum in {sums_name.lstrip('/')}")
    return [text.decode("utf-8") if isinstance(text, bytes) else str(text) for text in raw]
