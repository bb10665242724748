#!/usr/bin/env python3
"""The pipeline a researcher would write instead of attnscan: the Hugging Face baseline.

  hf_baseline.py --model DIR --dataset FILE [--header] [--col-a 1] [--col-b 2] [--rows N]
                 [--batch-size 32] [--threads N] [--peer current|reference] --out OUT.h5

Runs in a venv with torch + transformers + h5py + numpy, chosen by --peer (the script re-executes itself
with that venv's python when started with another one):
  current    ${ATTNSCAN_CACHE:-~/.cache/attnscan}/peer-venv: the current PyPI torch and transformers,
             pinned in scripts/make_peer_venv.sh, which makes it (the default: what a researcher
             installs today)
  reference  ${ATTNSCAN_CACHE:-~/.cache/attnscan}/tools-venv: transformers 4.40.2 on Debian's torch 1.13,
             the venv of the parity references (scripts/setup.sh test makes it)

What it does:
  - Hugging Face AutoModel in fp32 with eager attention (attn_implementation="eager"), batches of 32
    pairs in file order, each batch padded to its longest pair, torch.set_num_threads(<cores>),
    output_attentions=True;
  - every pair's attention cropped to its real tokens ([L, H, n, n]) and written with h5py as fp16,
    one dataset per example (attention/<i>), plus examples/n_tokens;
  - four seed metrics in numpy from the fp32 attention, per layer x head averaged over examples:
    next-token mass (query i -> key i+1), previous-token mass (i -> i-1), [CLS]/begin-token mass
    (every query -> key 0) and [SEP]/separator mass (every query -> the separator tokens; counted by id, so a separator written in a sentence counts too,
    where attnscan's delimiter counts the template's separators only), written to
    metrics/<name> [L, H].

The dataset is read as attnscan reads a tsv/csv without quoting: one row per line, fields split on tabs
(STS-B's .csv files are tab-separated too), optional header line, 0-based column indices.
"""
import argparse
import os
import sys
import time

CACHE = os.environ.get("ATTNSCAN_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnscan")
PEERS = {"current": os.path.join(CACHE, "peer-venv"), "reference": os.path.join(CACHE, "tools-venv")}
MAKES = {"current": "scripts/make_peer_venv.sh", "reference": "scripts/setup.sh test"}


def peer_python(peer):
    """The python of the peer's venv; stops with one line naming the script that makes it when absent."""
    python = os.path.join(PEERS[peer], "bin", "python")
    if not os.access(python, os.X_OK):
        sys.exit(f"hf_baseline: the {peer} peer's venv {PEERS[peer]} is absent: make it with {MAKES[peer]}")
    return python


def in_venv(venv):
    return os.path.realpath(sys.prefix) == os.path.realpath(venv)


if __name__ == "__main__":
    _peer = "current"
    for _i, _arg in enumerate(sys.argv):
        if _arg == "--peer" and _i + 1 < len(sys.argv):
            _peer = sys.argv[_i + 1]
        elif _arg.startswith("--peer="):
            _peer = _arg.split("=", 1)[1]
    if _peer not in PEERS:
        sys.exit(f"hf_baseline: --peer {_peer}: not one of {', '.join(sorted(PEERS))}")
    if not in_venv(PEERS[_peer]):
        _python = peer_python(_peer)
        os.execv(_python, [_python, os.path.abspath(__file__)] + sys.argv[1:])

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402


def read_pairs(path, header, col_a, col_b, rows):
    pairs = []
    with open(path, encoding="utf-8", newline="") as f:
        for line_no, line in enumerate(f):
            if header and line_no == 0:
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) <= max(col_a, col_b):
                continue
            pairs.append((fields[col_a], fields[col_b] if col_b >= 0 else None))
            if rows and len(pairs) >= rows:
                break
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--header", action="store_true", help="the first line is a header")
    ap.add_argument("--col-a", type=int, default=1)
    ap.add_argument("--col-b", type=int, default=2, help="-1: single texts (a decoder's main input)")
    ap.add_argument("--rows", type=int, default=0, help="first N pairs (0 = all)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=0, help="0 = all cores")
    ap.add_argument("--peer", choices=sorted(PEERS), default="current",
                    help="current: peer-venv (current PyPI torch + transformers); reference: tools-venv (4.40.2)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    threads = a.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(a.model)
    # fp32 whatever the checkpoint stores; transformers 4.56 and later name the argument dtype
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    dtype_arg = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    model = AutoModel.from_pretrained(a.model, attn_implementation="eager", **{dtype_arg: torch.float32}).eval()
    pairs = read_pairs(a.dataset, a.header, a.col_a, a.col_b, a.rows)
    cls_id, sep_id = tok.cls_token_id, tok.sep_token_id
    if tok.pad_token is None:  # decoders: any id pads, the attention mask hides it
        tok.pad_token = tok.eos_token
    tok.padding_side = "right"
    L, NH = model.config.num_hidden_layers, model.config.num_attention_heads
    sums = {k: np.zeros((L, NH), dtype=np.float64) for k in ("next_token", "prev_token", "cls", "sep")}
    n_tokens = []

    with h5py.File(a.out, "w") as f, torch.inference_mode():
        grp = f.create_group("attention")
        for start in range(0, len(pairs), a.batch_size):
            chunk = pairs[start:start + a.batch_size]
            second = None if chunk[0][1] is None else [p[1] for p in chunk]
            enc = tok([p[0] for p in chunk], second, padding=True, truncation=True, return_tensors="pt")
            out = model(**enc, output_attentions=True)
            att = torch.stack(out.attentions, dim=1).numpy()  # [B, L, H, S, S] fp32
            lengths = enc["attention_mask"].sum(dim=1).tolist()
            ids = enc["input_ids"].numpy()
            for b, n in enumerate(lengths):
                a_b = att[b, :, :, :n, :n]  # [L, H, n, n]
                grp.create_dataset(str(start + b), data=a_b.astype(np.float16))
                n_tokens.append(n)
                q = np.arange(n - 1)
                sums["next_token"] += a_b[:, :, q, q + 1].mean(axis=-1)
                sums["prev_token"] += a_b[:, :, q + 1, q].mean(axis=-1)
                row_ids = ids[b, :n]
                if cls_id is not None and sep_id is not None:  # the encoders' delimiters
                    sums["cls"] += a_b[:, :, :, row_ids == cls_id][..., 0].mean(axis=-1)
                    sums["sep"] += a_b[:, :, :, row_ids == sep_id].sum(axis=-1).mean(axis=-1)
        f.create_dataset("examples/n_tokens", data=np.asarray(n_tokens, dtype=np.uint32))
        for k, v in sums.items():
            f.create_dataset("metrics/" + k, data=(v / max(1, len(n_tokens))).astype(np.float32))
    print(f"hf_baseline: torch {torch.__version__}, transformers {transformers.__version__}: {len(n_tokens)} pairs, "
          f"{sum(n_tokens)} tokens, {threads} threads, {time.perf_counter() - t0:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
