"""An independent CoNLL-U reader for the tests (not attnscan's): ranges and empty nodes skipped as UD
says, HEAD made 0-based (-1: the root)."""
import pathlib


def read_conllu(path, pairing="single"):
    """List of examples, each a list of sentences of (form, head0, relation); `pairing` "single" (one
    sentence each) or consecutive pairs."""
    sentences, cur = [], []
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            if cur:
                sentences.append(cur)
                cur = []
            continue
        if line.startswith("#"):
            continue
        f = line.split("\t")
        if "-" in f[0] or "." in f[0]:
            continue
        cur.append((f[1], int(f[6]) - 1, f[7]))
    if pairing == "single":
        return [[s] for s in sentences]
    return [[sentences[i], sentences[i + 1]] for i in range(0, len(sentences), 2)]
