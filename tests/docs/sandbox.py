"""A throwaway copy of the repository's layout in which the docs' commands run as written.

TMP/repo holds the repository's configs/, data/, docs/, python/ and scripts/ (links), and build/ with links
to every entry of the real build directory but out/ (so the docs' outputs stay in TMP). TMP/shared/datasets
(`../shared/datasets` from TMP/repo) holds the first `rows` rows of each shared dataset file the shipped
configs and the docs read: the docs run as written, on small inputs. HOME is TMP/home.
"""
import os
import shutil
import subprocess
from pathlib import Path

# Dataset files the configs and docs read, and whether their first line is a header.
DATASET_FILES = {"paws/dev.tsv": True, "stsb/sts-train.csv": False, "stsb/sts-dev.csv": False,
                 "snli/s1.dev": False, "snli/s2.dev": False, "snli/labels.dev": False}


def head_lines(src, dst, n):
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as i, open(dst, "wb") as o:
        for k, line in enumerate(i):
            if k >= n:
                break
            o.write(line)


class Sandbox:
    def __init__(self, tmp, root, build, datasets, model, rows):
        self.tmp, self.root, self.build = Path(tmp), Path(root), Path(build)
        self.repo = self.tmp / "repo"
        self.home = self.tmp / "home"
        self.model = model
        for rel, header in DATASET_FILES.items():
            head_lines(Path(datasets) / rel, self.tmp / "shared" / "datasets" / rel, rows + (1 if header else 0))
        self.repo.mkdir(parents=True)
        self.home.mkdir()
        shutil.copytree(self.root / "configs", self.repo / "configs")
        for name in ("data", "docs", "python", "scripts"):
            (self.repo / name).symlink_to(self.root / name)
        (self.repo / "build").mkdir()
        for entry in self.build.iterdir():
            if entry.name not in ("out", "Testing"):
                (self.repo / "build" / entry.name).symlink_to(entry)
        self.attnscan = self.repo / "build" / "pipeline" / "attnscan"

    def env(self):
        e = dict(os.environ)
        e.update(HOME=str(self.home), ATTNSCAN_MODEL=str(self.model),
                 PATH=f"{self.repo / 'build' / 'pipeline'}:/usr/bin:{e.get('PATH', '')}",
                 PYTHONPATH=str(self.repo / "python"), PYTHONDONTWRITEBYTECODE="1")
        return e

    def sh(self, code, timeout=600):
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=self.repo, env=self.env(),
                              capture_output=True, text=True, timeout=timeout)

    def has(self, what):
        """Whether a `needs:` condition holds here: bf16, command:NAME, module:NAME."""
        if what == "bf16":
            info = subprocess.run([str(self.attnscan), "info"], capture_output=True, text=True, env=self.env()).stdout
            return any(l.startswith("bf16:") and "unavailable" not in l for l in info.splitlines())
        kind, _, name = what.partition(":")
        if kind == "command":
            return shutil.which(name, path=self.env()["PATH"]) is not None
        if kind == "module":
            import importlib.util
            return importlib.util.find_spec(name) is not None
        raise ValueError(f"unknown docs-test need: {what}")
