"""The run's provenance from the root and group attributes, as plain Python values."""
import json

from .errors import FormatError
from .optional import require

COUNTS = ("rows_read", "examples_written", "rows_skipped", "examples_truncated")


def text_attr(attrs, name, default=""):
    v = attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def counts(f):
    return {c: int(f.attrs[c]) for c in COUNTS if c in f.attrs}


def model(f, path):
    config_text = text_attr(f.attrs, "model_config", "")
    try:
        config = json.loads(config_text) if config_text else {}
    except ValueError as e:
        raise FormatError(f"{path}: root attribute model_config is not JSON ({e})") from None
    return {"dir": text_attr(f.attrs, "model_dir"), "sha256": text_attr(f.attrs, "model_sha256"), "config": config,
            "tokenizer": text_attr(f.attrs, "tokenizer"),
            "subword_kind": text_attr(f.attrs, "subword_kind", "WordPiece")}  # files without it are WordPiece


def dataset(f):
    return {"path": text_attr(f.attrs, "dataset"), "sha256": text_attr(f.attrs, "dataset_sha256")}


def config(f, path):
    """The effective configuration (YAML text in the root attribute config) as a dict."""
    yaml = require("yaml", "Result.config (the run's YAML configuration)")
    try:
        return yaml.safe_load(text_attr(f.attrs, "config")) or {}
    except yaml.YAMLError as e:
        raise FormatError(f"{path}: root attribute config is not YAML ({e})") from None


def detector_builds(f):
    """name -> (version, sha256 of the plugin's shared library), from the root attribute."""
    builds = {}
    for line in text_attr(f.attrs, "detector_builds").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            builds[parts[0]] = (parts[1], parts[2])
    return builds


def output_keys(f):
    """The "detector/output" keys of the scores, in the file's order ([] for a run without detectors)."""
    if "scores" not in f or "outputs" not in f["scores"].attrs:
        return []
    return [k.decode() if isinstance(k, bytes) else str(k) for k in f["scores"].attrs["outputs"]]


def detectors(f):
    """One dict per configured detector: name (the group's, an `as:` alias when given), plugin, version,
    description, parameters, outputs, plugin_sha256 (None in files without detector_builds)."""
    builds = detector_builds(f)
    found = {}
    for key in output_keys(f):
        name, output = key.split("/", 1)
        if name not in found:
            a = f["scores"][name].attrs
            found[name] = {"name": name, "plugin": text_attr(a, "plugin", name), "version": text_attr(a, "version"),
                           "description": text_attr(a, "description"), "parameters": text_attr(a, "parameters"),
                           "outputs": [], "plugin_sha256": builds.get(name, (None, None))[1]}
        found[name]["outputs"].append(output)
    return list(found.values())
